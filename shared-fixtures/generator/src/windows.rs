//! The shape Windows writes: an `Event` template holding `System` and a BinXml substitution that
//! carries a nested `EventData` instance (contract 6.7, worked example).

use crate::dsl::*;
use crate::writer::{ty, Tok, Val};

pub const XMLNS: &str = "http://schemas.microsoft.com/win/2004/08/events/event";

/// The outer definition. Values: 0 Level U8, 1 Opcode U8, 2 Task U16, 3 EventID U16,
/// 4 Qualifiers U16, 5 Keywords Hex64, 6 SystemTime FileTime, 7 ActivityID Guid, 8 ProcessID U32,
/// 9 ThreadID U32, 10 EventRecordID U64, 11 Version U8, 12 UserID Sid, 13 RelatedActivityID Guid,
/// 14 Provider name String, 15 Provider guid Guid, 16 Channel String, 17 Computer String,
/// 18 EventData BinXml.
pub fn system_def() -> E {
    e("Event")
        .dep(18)
        .attr_s("xmlns", XMLNS)
        .kid(
            e("System")
                .kid(
                    e("Provider")
                        .attr_opt("Name", 14, ty::STRING)
                        .attr_opt("Guid", 15, ty::GUID)
                        .empty(),
                )
                .kid(
                    e("EventID")
                        .dep(3)
                        .attr_opt("Qualifiers", 4, ty::U16)
                        .opt(3, ty::U16),
                )
                .kid(e("Version").dep(11).opt(11, ty::U8))
                .kid(e("Level").dep(0).opt(0, ty::U8))
                .kid(e("Task").dep(2).opt(2, ty::U16))
                .kid(e("Opcode").dep(1).opt(1, ty::U8))
                .kid(e("Keywords").dep(5).opt(5, ty::HEX64))
                .kid(
                    e("TimeCreated")
                        .attr_opt("SystemTime", 6, ty::FILETIME)
                        .empty(),
                )
                .kid(e("EventRecordID").dep(10).opt(10, ty::U64))
                .kid(
                    e("Correlation")
                        .attr_opt("ActivityID", 7, ty::GUID)
                        .attr_opt("RelatedActivityID", 13, ty::GUID)
                        .empty(),
                )
                .kid(
                    e("Execution")
                        .attr_opt("ProcessID", 8, ty::U32)
                        .attr_opt("ThreadID", 9, ty::U32)
                        .empty(),
                )
                .kid(e("Channel").dep(16).opt(16, ty::STRING))
                .kid(e("Computer").opt(17, ty::STRING))
                .kid(e("Security").attr_opt("UserID", 12, ty::SID).empty()),
        )
        .opt(18, ty::BINXML)
}

/// The System fields of one event.
#[derive(Clone, Debug)]
pub struct Sys {
    pub provider: String,
    pub provider_guid: [u8; 16],
    pub event_id: u16,
    pub qualifiers: Option<u16>,
    pub version: Option<u8>,
    pub level: u8,
    pub task: u16,
    pub opcode: u8,
    pub keywords: u64,
    pub time: u64,
    pub activity: Option<[u8; 16]>,
    pub pid: u32,
    pub tid: u32,
    pub record_id: u64,
    pub user: Option<Val>,
    pub channel: String,
    pub computer: String,
}

/// The record stream of one event: the outer instance with `event_data` as value 18.
pub fn event_record(s: &Sys, event_data: Val) -> Vec<Tok> {
    let values = vec![
        v_u8(s.level),
        v_u8(s.opcode),
        v_u16(s.task),
        v_u16(s.event_id),
        s.qualifiers.map(v_u16).unwrap_or_else(|| v_null_stale(2)),
        v_hex64(s.keywords),
        v_filetime(s.time),
        s.activity.map(v_guid).unwrap_or_else(|| v_null_stale(16)),
        v_u32(s.pid),
        v_u32(s.tid),
        v_u64(s.record_id),
        s.version.map(v_u8).unwrap_or_else(v_null),
        s.user.clone().unwrap_or_else(v_null),
        v_null(),
        v_str(&s.provider),
        v_guid(s.provider_guid),
        v_str(&s.channel),
        v_str(&s.computer),
        event_data,
    ];
    inst_record("system", system_def(), values)
}

/// An `EventData` definition with one named `Data` per (name, type), values in order.
pub fn event_data_def(fields: &[(&str, u8)]) -> E {
    let mut ed = e("EventData");
    for (i, (name, t)) in fields.iter().enumerate() {
        ed = ed.kid(e("Data").attr_s("Name", name).opt(i as u16, *t));
    }
    ed
}
