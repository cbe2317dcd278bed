//! The timestamp texts of a batch's entries: `evtx_parser_batch_timestamps`.
//!
//! A binding that yields pyevtx-rs's record shape needs each record's `timestamp` as text.
//! Formatting 41,541 FILETIMEs in Python cost 7,000 instructions per record (PERF.md P3);
//! here it is a cached minute prefix and a few digits. The Zig twin is
//! `zig/capi/timestamps.zig` (same rules, same bytes).
//!
//! The text (pyevtx-rs 0.14's `timestamp`, written down as `evtx_twin._parser.timestamp_text`):
//! RFC 3339 in UTC with the 100 ns ticks, trailing zeros trimmed (no `.` when the ticks are 0),
//! then `Z UTC`: `2025-01-06T07:58:14.6210546Z UTC`. Empty (Python's `None`) for a FILETIME of
//! 0, for a year past 9999 (Python's `datetime` ends there) and for an error entry.

/// FILETIME ticks (100 ns) per second and per minute.
const TICKS_PER_SECOND: u64 = 10_000_000;
const TICKS_PER_MINUTE: u64 = 60 * TICKS_PER_SECOND;
/// Days from 1601-01-01 (the FILETIME epoch) to 1970-01-01.
const DAYS_1601_TO_1970: i64 = 134_774;
/// The last year a text is given for (`datetime.MAXYEAR`).
const YEAR_MAX: i64 = 9999;
/// `YYYY-MM-DDTHH:MM:`, the text shared by every FILETIME of one minute.
const PREFIX_LEN: usize = 17;

/// The storage behind `evtx_batch_texts`. Invariant: `offsets` has one entry more than the
/// entries pushed since `clear`, and its last entry is `data.len()`.
#[derive(Debug, Default)]
pub(crate) struct Timestamps {
    pub data: Vec<u8>,
    pub offsets: Vec<u64>,
    /// The last minute formatted and its prefix (`None`: past `YEAR_MAX`). Records of a log
    /// come mostly in time order, so one entry catches nearly every lookup.
    minute: Option<(u64, Option<[u8; PREFIX_LEN]>)>,
}

impl Timestamps {
    pub(crate) fn clear(&mut self) {
        self.data.clear();
        self.offsets.clear();
        self.offsets.push(0);
    }

    /// Appends the text of `filetime`, or an empty text for `None` (an error entry).
    pub(crate) fn push(&mut self, filetime: Option<u64>) {
        if let Some(filetime) = filetime.filter(|&f| f != 0) {
            self.format(filetime);
        }
        self.offsets.push(self.data.len() as u64);
    }

    pub(crate) fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    fn format(&mut self, filetime: u64) {
        let minute = filetime / TICKS_PER_MINUTE;
        let prefix = match self.minute {
            Some((cached, prefix)) if cached == minute => prefix,
            _ => {
                let prefix = minute_prefix(minute);
                self.minute = Some((minute, prefix));
                prefix
            }
        };
        let Some(prefix) = prefix else {
            return;
        };
        let rest = filetime % TICKS_PER_MINUTE;
        let (second, ticks) = (rest / TICKS_PER_SECOND, rest % TICKS_PER_SECOND);
        self.data.extend_from_slice(&prefix);
        self.data.extend_from_slice(&two_digits(second));
        if ticks != 0 {
            let mut fraction = [b'.', 0, 0, 0, 0, 0, 0, 0];
            let mut left = ticks;
            for digit in fraction[1..].iter_mut().rev() {
                *digit = b'0' + (left % 10) as u8;
                left /= 10;
            }
            let used = fraction.len() - trailing_zeros(ticks);
            self.data.extend_from_slice(&fraction[..used]);
        }
        self.data.extend_from_slice(b"Z UTC");
    }
}

/// Trailing decimal zeros of a tick count of 1..=9,999,999 (0..=6).
fn trailing_zeros(mut ticks: u64) -> usize {
    debug_assert!(ticks != 0 && ticks < TICKS_PER_SECOND);
    let mut zeros = 0;
    while ticks.is_multiple_of(10) {
        ticks /= 10;
        zeros += 1;
    }
    zeros
}

fn two_digits(value: u64) -> [u8; 2] {
    debug_assert!(value < 100);
    [b'0' + (value / 10) as u8, b'0' + (value % 10) as u8]
}

/// `YYYY-MM-DDTHH:MM:` of the FILETIME minute `minute`, or `None` past `YEAR_MAX`.
fn minute_prefix(minute: u64) -> Option<[u8; PREFIX_LEN]> {
    // u64::MAX ticks is 30.7 million days: every value fits an i64 with room.
    let days = (minute / 1440) as i64;
    let of_day = minute % 1440;
    let (year, month, day) = civil(days - DAYS_1601_TO_1970);
    if year > YEAR_MAX {
        return None;
    }
    debug_assert!(year >= 1601);
    let year = year as u64;
    let mut out = *b"0000-00-00T00:00:";
    out[0..2].copy_from_slice(&two_digits(year / 100));
    out[2..4].copy_from_slice(&two_digits(year % 100));
    out[5..7].copy_from_slice(&two_digits(month));
    out[8..10].copy_from_slice(&two_digits(day));
    out[11..13].copy_from_slice(&two_digits(of_day / 60));
    out[14..16].copy_from_slice(&two_digits(of_day % 60));
    Some(out)
}

/// The proleptic Gregorian (year, month, day) of `days` since 1970-01-01 (H. Hinnant's
/// `civil_from_days`: eras of 400 years, years starting in March).
fn civil(days: i64) -> (i64, u64, u64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month as u64, day as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(filetimes: &[Option<u64>]) -> Vec<String> {
        let mut t = Timestamps::default();
        t.clear();
        for &f in filetimes {
            t.push(f);
        }
        assert_eq!(t.len(), filetimes.len());
        t.offsets
            .windows(2)
            .map(|w| String::from_utf8(t.data[w[0] as usize..w[1] as usize].to_vec()).unwrap())
            .collect()
    }

    // Expected texts: the date and time by Python's `datetime(1601, 1, 1) +
    // timedelta(seconds=filetime // 10**7)`, the ticks `filetime % 10**7` written by hand
    // (the first four are python/tests/test_inputs.py's), not by this code.
    #[test]
    fn known_filetimes() {
        let cases: &[(u64, &str)] = &[
            // 0 ticks: no fraction, no dot.
            (131_000_000_000_000_000, "2016-02-15T08:53:20Z UTC"),
            (131_000_000_000_000_001, "2016-02-15T08:53:20.0000001Z UTC"),
            // Trailing zeros trimmed.
            (131_000_000_000_010_000, "2016-02-15T08:53:20.001Z UTC"),
            (131_000_000_000_000_010, "2016-02-15T08:53:20.000001Z UTC"),
            (131_000_000_005_000_000, "2016-02-15T08:53:20.5Z UTC"),
            // The epoch's first tick, and its first second.
            (1, "1601-01-01T00:00:00.0000001Z UTC"),
            (10_000_000, "1601-01-01T00:00:01Z UTC"),
            // The Unix epoch, a leap day, the last tick of 9999.
            (116_444_736_000_000_000, "1970-01-01T00:00:00Z UTC"),
            (125_963_423_999_999_999, "2000-02-29T23:59:59.9999999Z UTC"),
            (
                2_650_467_743_999_999_999,
                "9999-12-31T23:59:59.9999999Z UTC",
            ),
        ];
        let filetimes: Vec<_> = cases.iter().map(|&(f, _)| Some(f)).collect();
        let want: Vec<_> = cases.iter().map(|&(_, t)| t.to_string()).collect();
        assert_eq!(texts(&filetimes), want);
    }

    #[test]
    fn empty_for_zero_errors_and_years_past_9999() {
        // 2_650_467_744_000_000_000 is 10000-01-01, 0x7FFF_FFFF_FFFF_FFFF (Windows' largest
        // FILETIME) in 30828, u64::MAX in 60056.
        let got = texts(&[
            Some(0),
            None,
            Some(2_650_467_744_000_000_000),
            Some(0x7FFF_FFFF_FFFF_FFFF),
            Some(u64::MAX),
            Some(1),
        ]);
        assert_eq!(
            got,
            ["", "", "", "", "", "1601-01-01T00:00:00.0000001Z UTC"]
        );
    }
}
