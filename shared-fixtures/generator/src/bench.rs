//! The volume mode: a Security-like log of about `mb` MiB (not committed; written to `target/`).
//!
//! Events 4624, 4625, 4634, 4648, 4672, 4688 and 4776 with realistic values: SIDs of a domain,
//! well-known accounts, logon ids that are opened by 4624 and closed by 4634, GUIDs, IPv4/IPv6
//! addresses, ports, process names and command lines, timestamps increasing by random gaps.
//! Like Windows, each chunk defines every template it uses inline in the first record that uses
//! it (the outer Event/System template and one EventData template per event id, nested in a
//! BinXml value) and later records of the chunk reference the definitions by offset.

use std::path::Path;

use crate::dsl::*;
use crate::log::Log;
use crate::rng::Rng;
use crate::windows::{event_data_def, event_record, Sys};
use crate::writer::{file_of, filetime, ty, Val};

const S: u8 = ty::STRING;

fn fields(event_id: u16) -> Vec<(&'static str, u8)> {
    let subject = [
        ("SubjectUserSid", ty::SID),
        ("SubjectUserName", S),
        ("SubjectDomainName", S),
        ("SubjectLogonId", ty::HEX64),
    ];
    let mut f: Vec<(&'static str, u8)> = Vec::new();
    match event_id {
        4624 => {
            f.extend(subject);
            f.extend([
                ("TargetUserSid", ty::SID),
                ("TargetUserName", S),
                ("TargetDomainName", S),
                ("TargetLogonId", ty::HEX64),
                ("LogonType", ty::U32),
                ("LogonProcessName", S),
                ("AuthenticationPackageName", S),
                ("WorkstationName", S),
                ("LogonGuid", ty::GUID),
                ("TransmittedServices", S),
                ("LmPackageName", S),
                ("KeyLength", ty::U32),
                ("ProcessId", ty::HEX64),
                ("ProcessName", S),
                ("IpAddress", S),
                ("IpPort", S),
                ("ImpersonationLevel", S),
                ("RestrictedAdminMode", S),
                ("TargetOutboundUserName", S),
                ("TargetOutboundDomainName", S),
                ("VirtualAccount", S),
                ("TargetLinkedLogonId", ty::HEX64),
                ("ElevatedToken", S),
            ]);
        }
        4625 => {
            f.extend(subject);
            f.extend([
                ("TargetUserSid", ty::SID),
                ("TargetUserName", S),
                ("TargetDomainName", S),
                ("Status", ty::HEX32),
                ("FailureReason", S),
                ("SubStatus", ty::HEX32),
                ("LogonType", ty::U32),
                ("LogonProcessName", S),
                ("AuthenticationPackageName", S),
                ("WorkstationName", S),
                ("TransmittedServices", S),
                ("LmPackageName", S),
                ("KeyLength", ty::U32),
                ("ProcessId", ty::HEX64),
                ("ProcessName", S),
                ("IpAddress", S),
                ("IpPort", S),
            ]);
        }
        4634 => f.extend([
            ("TargetUserSid", ty::SID),
            ("TargetUserName", S),
            ("TargetDomainName", S),
            ("TargetLogonId", ty::HEX64),
            ("LogonType", ty::U32),
        ]),
        4648 => {
            f.extend(subject);
            f.extend([
                ("LogonGuid", ty::GUID),
                ("TargetUserName", S),
                ("TargetDomainName", S),
                ("LogonGuid", ty::GUID),
                ("TargetServerName", S),
                ("TargetInfo", S),
                ("ProcessId", ty::HEX64),
                ("ProcessName", S),
                ("IpAddress", S),
                ("IpPort", S),
            ]);
        }
        4672 => {
            f.extend(subject);
            f.push(("PrivilegeList", S));
        }
        4688 => {
            f.extend(subject);
            f.extend([
                ("NewProcessId", ty::HEX64),
                ("NewProcessName", S),
                ("TokenElevationType", S),
                ("ProcessId", ty::HEX64),
                ("CommandLine", S),
                ("TargetUserSid", ty::SID),
                ("TargetUserName", S),
                ("TargetDomainName", S),
                ("TargetLogonId", ty::HEX64),
                ("ParentProcessName", S),
                ("MandatoryLabel", ty::SID),
            ]);
        }
        4776 => f.extend([
            ("PackageName", S),
            ("TargetUserName", S),
            ("Workstation", S),
            ("Status", ty::HEX32),
        ]),
        _ => unreachable!(),
    }
    f
}

#[derive(Clone)]
struct Account {
    sid: Val,
    name: String,
    domain: String,
}

struct World {
    rng: Rng,
    domain_sid: [u32; 3],
    users: Vec<Account>,
    machines: Vec<String>,
    sessions: Vec<(usize, u64, u32)>, // (user index, logon id, logon type)
    pids: Vec<u64>,
}

const PROCESSES: &[&str] = &[
    "C:\\Windows\\System32\\svchost.exe",
    "C:\\Windows\\System32\\lsass.exe",
    "C:\\Windows\\System32\\services.exe",
    "C:\\Windows\\System32\\winlogon.exe",
    "C:\\Windows\\System32\\cmd.exe",
    "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe",
    "C:\\Windows\\explorer.exe",
    "C:\\Program Files\\Microsoft Office\\root\\Office16\\OUTLOOK.EXE",
    "C:\\Program Files (x86)\\Microsoft\\Edge\\Application\\msedge.exe",
    "C:\\Windows\\System32\\conhost.exe",
    "C:\\Windows\\System32\\taskhostw.exe",
    "C:\\Windows\\System32\\RuntimeBroker.exe",
    "C:\\Windows\\System32\\consent.exe",
    "C:\\Windows\\System32\\wbem\\WmiPrvSE.exe",
];

const COMMANDS: &[&str] = &[
    "C:\\Windows\\system32\\svchost.exe -k netsvcs -p -s Schedule",
    "\"C:\\Windows\\system32\\cmd.exe\" /c \"dir C:\\Users\\%USERNAME%\\Documents > out.txt\"",
    "powershell.exe -NoProfile -ExecutionPolicy Bypass -File C:\\ops\\inventory.ps1",
    "\"C:\\Program Files (x86)\\Microsoft\\Edge\\Application\\msedge.exe\" --type=renderer \
        --lang=en-US",
    "C:\\Windows\\system32\\conhost.exe 0xffffffff -ForceV1",
    "taskhostw.exe {222A245B-E637-4AE9-A93F-A59CA119A75E}",
    "",
    "C:\\Windows\\System32\\RuntimeBroker.exe -Embedding",
];

const PRIVILEGES: &str = "SeSecurityPrivilege\r\n\t\t\tSeBackupPrivilege\r\n\t\t\tSeRestorePrivile\
    ge\r\n\t\t\tSeTakeOwnershipPrivilege\r\n\t\t\tSeDebugPrivilege\r\n\t\t\tSeSystemEnvironmentPri\
    vilege\r\n\t\t\tSeLoadDriverPrivilege\r\n\t\t\tSeImpersonatePrivilege\r\n\t\t\tSeDelegateSessi\
    onUserImpersonatePrivilege";

impl World {
    fn new(seed: u64) -> World {
        let mut rng = Rng::new(seed);
        let domain_sid = [
            (rng.next_u64() as u32) | 0x4000_0000,
            rng.next_u64() as u32,
            rng.next_u64() as u32,
        ];
        let mut users = vec![
            Account {
                sid: v_sid(1, 5, &[18]),
                name: "SYSTEM".into(),
                domain: "NT AUTHORITY".into(),
            },
            Account {
                sid: v_sid(1, 5, &[19]),
                name: "LOCAL SERVICE".into(),
                domain: "NT AUTHORITY".into(),
            },
            Account {
                sid: v_sid(1, 5, &[20]),
                name: "NETWORK SERVICE".into(),
                domain: "NT AUTHORITY".into(),
            },
            Account {
                sid: v_sid(1, 5, &[90, 0, 1]),
                name: "DWM-1".into(),
                domain: "Window Manager".into(),
            },
            Account {
                sid: v_sid(1, 5, &[96, 0, 0]),
                name: "UMFD-0".into(),
                domain: "Font Driver Host".into(),
            },
        ];
        let names = [
            "Administrator",
            "alice.martin",
            "bob.nguyen",
            "carol.schmidt",
            "dave.okafor",
            "erin.rossi",
            "svc_backup",
            "svc_sql",
            "helpdesk01",
            "WS-FIN-042$",
            "DC01$",
            "frank.müller",
            "grace.øster",
        ];
        for (i, n) in names.iter().enumerate() {
            let rid = if i == 0 { 500 } else { 1100 + i as u32 * 37 };
            users.push(Account {
                sid: v_sid(
                    1,
                    5,
                    &[21, domain_sid[0], domain_sid[1], domain_sid[2], rid],
                ),
                name: n.to_string(),
                domain: "CORP".into(),
            });
        }
        let machines = vec![
            "WS-FIN-042".to_string(),
            "WS-HR-007".into(),
            "LAPTOP-9QK2M1".into(),
            "-".into(),
            "SRV-FILE-01".into(),
        ];
        World {
            rng,
            domain_sid,
            users,
            machines,
            sessions: Vec::new(),
            pids: vec![0x4, 0x2c8, 0x3a4, 0x1f0],
        }
    }

    fn guid(&mut self) -> [u8; 16] {
        let mut g: [u8; 16] = self.rng.bytes();
        g[7] = (g[7] & 0x0F) | 0x40;
        g[8] = (g[8] & 0x3F) | 0x80;
        g
    }

    fn ip(&mut self) -> String {
        match self.rng.below(10) {
            0 => "-".into(),
            1 => "::1".into(),
            2 => "127.0.0.1".into(),
            3 => format!(
                "fe80::{:x}:{:x}:{:x}:{:x}",
                self.rng.below(65536),
                self.rng.below(65536),
                self.rng.below(65536),
                self.rng.below(65536)
            ),
            4..=6 => format!(
                "10.{}.{}.{}",
                1 + self.rng.below(20),
                self.rng.below(256),
                1 + self.rng.below(254)
            ),
            _ => format!("192.168.{}.{}", self.rng.below(4), 2 + self.rng.below(250)),
        }
    }

    fn port(&mut self, ip: &str) -> String {
        if ip == "-" {
            "-".into()
        } else if self.rng.chance(1, 4) {
            "0".into()
        } else {
            format!("{}", 49152 + self.rng.below(16383))
        }
    }

    fn pid(&mut self) -> u64 {
        if self.pids.len() < 64 || self.rng.chance(1, 5) {
            let p = (self.rng.below(0x3000) + 0x100) & !3;
            self.pids.push(p);
            p
        } else {
            *self.rng.pick(&self.pids)
        }
    }

    fn user_index(&mut self) -> usize {
        // Mostly domain users and SYSTEM.
        if self.rng.chance(1, 3) {
            0
        } else {
            self.rng.below(self.users.len() as u64) as usize
        }
    }

    fn logon_id(&mut self) -> u64 {
        0x10000 + self.rng.below(0x0FFF_0000)
    }

    fn subject(&mut self) -> (Account, u64) {
        if self.rng.chance(1, 2) || self.sessions.is_empty() {
            (self.users[0].clone(), 0x3e7)
        } else {
            let (u, l, _) = *self.rng.pick(&self.sessions);
            (self.users[u].clone(), l)
        }
    }

    /// The EventData values of one event.
    fn event_values(&mut self, event_id: u16) -> Vec<Val> {
        let (subj, subj_logon) = self.subject();
        let subject = |v: &mut Vec<Val>| {
            v.push(subj.sid.clone());
            v.push(v_str(&subj.name));
            v.push(v_str(&subj.domain));
            v.push(v_hex64(subj_logon));
        };
        let mut v = Vec::new();
        match event_id {
            4624 => {
                subject(&mut v);
                let ui = self.user_index();
                let u = self.users[ui].clone();
                let logon = self.logon_id();
                let lt = *self.rng.pick(&[2u32, 3, 3, 3, 5, 5, 7, 10, 11]);
                self.sessions.push((ui, logon, lt));
                if self.sessions.len() > 200 {
                    self.sessions.remove(0);
                }
                let ip = self.ip();
                let port = self.port(&ip);
                let kerberos = self.rng.chance(1, 2);
                let ws = self.rng.pick(&self.machines).clone();
                let g = if kerberos { self.guid() } else { [0; 16] };
                let pid = self.pid();
                v.extend([
                    u.sid.clone(),
                    v_str(&u.name),
                    v_str(&u.domain),
                    v_hex64(logon),
                    v_u32(lt),
                    v_str(if lt == 5 {
                        "Advapi  "
                    } else if kerberos {
                        "Kerberos"
                    } else {
                        "NtLmSsp "
                    }),
                    v_str(if kerberos {
                        "Kerberos"
                    } else if lt == 5 {
                        "Negotiate"
                    } else {
                        "NTLM"
                    }),
                    v_str(&ws),
                    v_guid(g),
                    v_str("-"),
                    v_str(if kerberos { "-" } else { "NTLM V2" }),
                    v_u32(if kerberos { 0 } else { 128 }),
                    v_hex64(if lt == 3 { 0 } else { pid }),
                    v_str(if lt == 3 {
                        "-"
                    } else {
                        self.rng.pick_s(PROCESSES)
                    }),
                    v_str(&ip),
                    v_str(&port),
                    v_str(self.rng.pick_s(&["%%1833", "%%1840", "-"])),
                    v_str("-"),
                    v_str("-"),
                    v_str("-"),
                    v_str(if ui < 5 { "%%1843" } else { "%%1842" }),
                    v_hex64(0),
                    v_str(self.rng.pick_s(&["%%1842", "%%1843"])),
                ]);
            }
            4625 => {
                subject(&mut v);
                let ui = self.user_index();
                let u = self.users[ui].clone();
                let ip = self.ip();
                let port = self.port(&ip);
                let (status, reason, sub) = *self.rng.pick(&[
                    (0xc000006du32, "%%2313", 0xc000006au32),
                    (0xc000006d, "%%2313", 0xc0000064),
                    (0xc000006e, "%%2312", 0xc0000072),
                    (0xc0000234, "%%2307", 0x0),
                ]);
                let ws = self.rng.pick(&self.machines).clone();
                let pid = self.pid();
                v.extend([
                    v_sid(1, 0, &[0]),
                    v_str(&u.name),
                    v_str(&u.domain),
                    v_hex32(status),
                    v_str(reason),
                    v_hex32(sub),
                    v_u32(*self.rng.pick(&[2u32, 3, 3, 10])),
                    v_str("NtLmSsp "),
                    v_str("NTLM"),
                    v_str(&ws),
                    v_str("-"),
                    v_str("-"),
                    v_u32(0),
                    v_hex64(pid),
                    v_str(self.rng.pick_s(PROCESSES)),
                    v_str(&ip),
                    v_str(&port),
                ]);
            }
            4634 => {
                let (ui, logon, lt) = if self.sessions.is_empty() {
                    (0, 0x3e7, 5)
                } else {
                    let i = self.rng.below(self.sessions.len() as u64) as usize;
                    self.sessions.swap_remove(i)
                };
                let u = self.users[ui].clone();
                v.extend([
                    u.sid,
                    v_str(&u.name),
                    v_str(&u.domain),
                    v_hex64(logon),
                    v_u32(lt),
                ]);
            }
            4648 => {
                subject(&mut v);
                let ui = self.user_index();
                let u = self.users[ui].clone();
                let g1 = self.guid();
                let ip = self.ip();
                let port = self.port(&ip);
                let server = self
                    .rng
                    .pick(&["localhost", "DC01.corp.example.com", "SRV-FILE-01"]);
                let pid = self.pid();
                v.extend([
                    v_guid(g1),
                    v_str(&u.name),
                    v_str(&u.domain),
                    v_guid([0; 16]),
                    v_str(server),
                    v_str(server),
                    v_hex64(pid),
                    v_str(self.rng.pick_s(PROCESSES)),
                    v_str(&ip),
                    v_str(&port),
                ]);
            }
            4672 => {
                subject(&mut v);
                let n = 1 + self.rng.below(9) as usize;
                let list: Vec<&str> = PRIVILEGES.split("\r\n\t\t\t").take(n).collect();
                v.push(v_str(&list.join("\r\n\t\t\t")));
            }
            4688 => {
                subject(&mut v);
                let newpid = self.pid();
                let parent = self.pid();
                let image = self.rng.pick(PROCESSES).to_string();
                let cmd = self.rng.pick(COMMANDS).to_string();
                let label = *self.rng.pick(&[0x2000u32, 0x3000, 0x4000]);
                v.extend([
                    v_hex64(newpid),
                    v_str(&image),
                    v_str(self.rng.pick_s(&["%%1936", "%%1937", "%%1938"])),
                    v_hex64(parent),
                    v_str(&cmd),
                    v_sid(1, 0, &[0]),
                    v_str("-"),
                    v_str("-"),
                    v_hex64(0),
                    v_str(self.rng.pick_s(PROCESSES)),
                    v_sid(1, 16, &[label]),
                ]);
            }
            4776 => {
                let ui = self.user_index();
                let u = self.users[ui].clone();
                let ws = self.rng.pick(&self.machines).clone();
                v.extend([
                    v_str("MICROSOFT_AUTHENTICATION_PACKAGE_V1_0"),
                    v_str(&u.name),
                    v_str(&ws),
                    v_hex32(*self.rng.pick(&[0u32, 0, 0, 0xc000006a, 0xc0000064])),
                ]);
            }
            _ => unreachable!(),
        }
        v
    }
}

fn task_of(event_id: u16) -> u16 {
    match event_id {
        4624 | 4625 | 4648 => 12544,
        4634 => 12545,
        4672 => 12548,
        4688 => 13312,
        4776 => 14336,
        _ => 0,
    }
}

/// Builds the volume log in memory: `mb` MiB (4096-byte header + whole chunks).
pub fn build(seed: u64, mb: u64) -> Vec<u8> {
    let target_chunks = ((mb * 1024 * 1024).saturating_sub(4096) / 65536).max(1) as usize;
    let mut w = World::new(seed);
    let _ = w.domain_sid;
    let mut log = Log::new();
    // 2025-01-06T07:58:12Z
    let mut time = filetime(1_736_150_292, 0);
    let provider_guid = [
        0x25, 0x96, 0x84, 0x54, 0x78, 0x54, 0x94, 0x49, 0xA5, 0xBA, 0x3E, 0x3B, 0x03, 0x28, 0xC3,
        0x0D,
    ];
    let activity = w.guid();
    let lsass_tid = [0x2d4u32, 0x5f0, 0x1a8c, 0x3104];
    while log.chunks.len() < target_chunks {
        let event_id = *w.rng.pick(&[
            4624u16, 4624, 4624, 4624, 4624, 4624, 4634, 4634, 4634, 4634, 4672, 4672, 4672, 4688,
            4688, 4688, 4776, 4776, 4625, 4648,
        ]);
        time += w.rng.below(30_000_000) + 1; // up to 3 s
        let id = log.next_id;
        let s = Sys {
            provider: "Microsoft-Windows-Security-Auditing".into(),
            provider_guid,
            event_id,
            qualifiers: None,
            version: Some(match event_id {
                4624 => 2,
                4688 => 2,
                4625 | 4648 => 0,
                _ => 0,
            }),
            level: 0,
            task: task_of(event_id),
            opcode: 0,
            keywords: if event_id == 4625 {
                0x8010_0000_0000_0000
            } else {
                0x8020_0000_0000_0000
            },
            time,
            activity: if w.rng.chance(3, 4) {
                Some(activity)
            } else {
                None
            },
            pid: 0x2c8,
            tid: *w.rng.pick(&lsass_tid),
            record_id: id,
            user: None,
            channel: "Security".into(),
            computer: "WS-FIN-042.corp.example.com".into(),
        };
        let f = fields(event_id);
        let values = w.event_values(event_id);
        debug_assert_eq!(f.len(), values.len());
        let data = v_inst(&format!("ed-{event_id}"), event_data_def(&f), values);
        log.rec_at(event_record(&s, data), time);
    }
    // The last chunk in progress was started by a record that did not fit: drop it so the file
    // is exactly `target_chunks` chunks.
    let mut chunks = log.chunks;
    chunks.truncate(target_chunks);
    file_of(&chunks)
}

pub fn write(out: &Path, seed: u64, mb: u64) -> std::io::Result<()> {
    let bytes = build(seed, mb);
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(out, &bytes)?;
    eprintln!(
        "wrote {} ({} bytes, {} chunks, seed {seed})",
        out.display(),
        bytes.len(),
        (bytes.len() - 4096) / 65536
    );
    Ok(())
}
