//! Relative time expressions ("yesterday", "last Friday", "two weeks ago",
//! "last month") resolved to dates against the day a memory was said, so
//! that a memory recalled weeks later says when its events happened and
//! two memories' events can be compared (issue 54 §4).
//!
//! Only expressions whose meaning is fixed by the day they were said are
//! resolved; "on Friday", "the week before" (relative to another event)
//! and "recently" are left as written. Conventions:
//! - a named weekday ("last Friday", "this past Sunday") is the latest such
//!   day strictly before the day said; "next Friday" the first after it;
//! - "last weekend" is the latest Saturday–Sunday that ended before the day
//!   said (said on a Sunday, the weekend before); named by its Saturday;
//! - "last week" is the calendar week (Monday to Sunday) before the day's;
//! - "N days/weeks ago" is a day; "N months/years ago" a month or a year;
//! - "a few days ago" and "the other day" stay vague: a few days before.
//!
//! ```
//! use agon_memory::dates::annotated;
//! use chrono::NaiveDate;
//!
//! let said = NaiveDate::from_ymd_opt(2023, 5, 15).unwrap(); // a Monday
//! assert_eq!(
//!     annotated("I broke my wrist last Friday, and yesterday it rained.", said),
//!     "I broke my wrist last Friday (12 May 2023), and yesterday (14 May 2023) it rained."
//! );
//! ```

use std::borrow::Cow;
use std::fmt::{self, Write as _};

use chrono::{Datelike, Days, Months, NaiveDate, Weekday};

/// A date or a period an expression names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// One day.
    Day(NaiveDate),
    /// A weekend, by its Saturday.
    Weekend(NaiveDate),
    /// A calendar week, by its Monday.
    Week(NaiveDate),
    /// A calendar month.
    Month {
        /// The year.
        year: i32,
        /// 1–12.
        month: u32,
    },
    /// A calendar year.
    Year(i32),
    /// A few days (2–6) before this day.
    FewDaysBefore(NaiveDate),
}

impl When {
    /// The first day of the period (comparable across memories).
    pub fn first_day(&self) -> NaiveDate {
        match *self {
            Self::Day(d) | Self::Weekend(d) | Self::Week(d) => d,
            Self::Month { year, month } => first_of_month(year, month),
            Self::Year(year) => first_of_month(year, 1),
            Self::FewDaysBefore(d) => d - Days::new(6),
        }
    }

    /// The last day of the period.
    pub fn last_day(&self) -> NaiveDate {
        match *self {
            Self::Day(d) => d,
            Self::Weekend(saturday) => saturday + Days::new(1),
            Self::Week(monday) => monday + Days::new(6),
            Self::Month { year, month } => {
                first_of_month(year, month) + Months::new(1) - Days::new(1)
            }
            Self::Year(year) => first_of_month(year, 12) + Days::new(30),
            Self::FewDaysBefore(d) => d - Days::new(2),
        }
    }
}

fn first_of_month(year: i32, month: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(year, month, 1).unwrap_or(NaiveDate::MIN)
}

/// `7 May 2023`.
fn day_text(d: NaiveDate) -> String {
    format!("{} {}", d.day(), d.format("%B %Y"))
}

impl fmt::Display for When {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Day(d) => f.write_str(&day_text(d)),
            Self::Weekend(saturday) => write!(f, "the weekend of {}", day_text(saturday)),
            Self::Week(monday) => write!(f, "the week of {}", day_text(monday)),
            Self::Month { year, month } => {
                write!(f, "{}", first_of_month(year, month).format("%B %Y"))
            }
            Self::Year(year) => write!(f, "{year}"),
            Self::FewDaysBefore(d) => write!(f, "a few days before {}", day_text(d)),
        }
    }
}

/// One resolved expression of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DateMention {
    /// Byte range of the expression in the text.
    pub span: std::ops::Range<usize>,
    /// What it names.
    pub when: When,
}

/// A word of the text: its lowercase form and byte range.
struct Word {
    lower: String,
    span: std::ops::Range<usize>,
}

fn words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        let part_of_word = c.is_alphanumeric() || c == '\'';
        match (start, part_of_word) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                out.push(Word {
                    lower: text[s..i].to_lowercase(),
                    span: s..i,
                });
                start = None;
            }
            _ => {}
        }
    }
    out
}

fn weekday(word: &str) -> Option<Weekday> {
    let day = word.strip_suffix("'s").unwrap_or(word);
    day.parse::<Weekday>()
        .ok()
        .filter(|_| day.len() > 3 && day.ends_with("day"))
}

/// A count word: digits up to 99, "a"/"an", one to twelve.
fn count(word: &str) -> Option<u32> {
    const NUMBERS: [&str; 12] = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve",
    ];
    match word {
        "a" | "an" => Some(1),
        _ => NUMBERS
            .iter()
            .position(|n| *n == word)
            .map(|i| i as u32 + 1)
            .or_else(|| word.parse::<u32>().ok().filter(|n| (1..100).contains(n))),
    }
}

/// 1–7 days: a distance of 0 between weekdays is a whole week.
fn week_step(days: u32) -> Days {
    Days::new(u64::from(if days == 0 { 7 } else { days }))
}

/// The latest `day` strictly before `said`.
fn previous(said: NaiveDate, day: Weekday) -> NaiveDate {
    said - week_step(said.weekday().days_since(day))
}

/// The first `day` strictly after `said`.
fn following(said: NaiveDate, day: Weekday) -> NaiveDate {
    said + week_step(day.days_since(said.weekday()))
}

fn monday_of(d: NaiveDate) -> NaiveDate {
    d - Days::new(u64::from(d.weekday().num_days_from_monday()))
}

fn month_of(d: NaiveDate) -> When {
    When::Month {
        year: d.year(),
        month: d.month(),
    }
}

/// The expression starting at `w[0]`: what it names and how many words it
/// takes, or `None`.
fn expression(w: &[&str], said: NaiveDate) -> Option<(When, usize)> {
    let day = When::Day;
    let at = |i: usize| w.get(i).copied().unwrap_or_default();
    match (at(0), at(1), at(2), at(3)) {
        ("the", "day", "before", "yesterday") => Some((day(said - Days::new(2)), 4)),
        ("the", "day", "after", "tomorrow") => Some((day(said + Days::new(2)), 4)),
        ("the", "other", "day", _) => Some((When::FewDaysBefore(said), 3)),
        ("a", "few", "days", "ago") => Some((When::FewDaysBefore(said), 4)),
        ("a", "couple", unit, "ago") => ago(2, unit, said).map(|when| (when, 4)),
        ("a", "couple", "of", unit) if at(4) == "ago" => ago(2, unit, said).map(|when| (when, 5)),
        ("several", "days", "ago", _) => Some((When::FewDaysBefore(said), 3)),
        ("yesterday", ..) => Some((day(said - Days::new(1)), 1)),
        ("last", "night", ..) => Some((day(said - Days::new(1)), 2)),
        ("today" | "tonight", ..) => Some((day(said), 1)),
        ("this", "morning" | "afternoon" | "evening", ..) => Some((day(said), 2)),
        ("tomorrow", ..) => Some((day(said + Days::new(1)), 1)),
        ("this", "past", next, _) => relative("last", next, said).map(|when| (when, 3)),
        ("last" | "next", next, ..) => relative(at(0), next, said).map(|when| (when, 2)),
        ("this", "month", ..) => Some((month_of(said), 2)),
        ("this", "year", ..) => Some((When::Year(said.year()), 2)),
        (n, unit, "ago", _) => ago(count(n)?, unit, said).map(|when| (when, 3)),
        _ => None,
    }
}

/// "last/next WEEKDAY|weekend|week|month|year".
fn relative(direction: &str, what: &str, said: NaiveDate) -> Option<When> {
    let back = direction == "last";
    if let Some(d) = weekday(what) {
        return Some(When::Day(if back {
            previous(said, d)
        } else {
            following(said, d)
        }));
    }
    Some(match what {
        "weekend" if back => When::Weekend(previous(said, Weekday::Sun) - Days::new(1)),
        "weekend" => When::Weekend(following(said, Weekday::Sat)),
        "week" if back => When::Week(monday_of(said) - Days::new(7)),
        "week" => When::Week(monday_of(said) + Days::new(7)),
        "month" if back => month_of(said.checked_sub_months(Months::new(1))?),
        "month" => month_of(said.checked_add_months(Months::new(1))?),
        "year" if back => When::Year(said.year() - 1),
        "year" => When::Year(said.year() + 1),
        _ => return None,
    })
}

/// "N days/weeks/months/years ago".
fn ago(n: u32, unit: &str, said: NaiveDate) -> Option<When> {
    let unit = unit.strip_suffix('s').unwrap_or(unit);
    Some(match unit {
        "day" => When::Day(said.checked_sub_days(Days::new(u64::from(n)))?),
        "week" => When::Day(said.checked_sub_days(Days::new(7 * u64::from(n)))?),
        "month" => month_of(said.checked_sub_months(Months::new(n))?),
        "year" => When::Year(said.year() - i32::try_from(n).ok()?),
        _ => return None,
    })
}

/// Every relative time expression of `text` resolved against `said`, the
/// day it was said, in the order they appear.
pub fn mentions(text: &str, said: NaiveDate) -> Vec<DateMention> {
    let words = words(text);
    let lower: Vec<&str> = words.iter().map(|w| w.lower.as_str()).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        match expression(&lower[i..], said) {
            Some((when, taken)) => {
                out.push(DateMention {
                    span: words[i].span.start..words[i + taken - 1].span.end,
                    when,
                });
                i += taken;
            }
            None => i += 1,
        }
    }
    out
}

/// A relative time of a memory resolved to the date or period it names,
/// as recall reports it (`agon recall --json`, `GET /api/recall`): the
/// memory's text is left as written.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ResolvedDate {
    /// The expression as written ("last Friday").
    pub expression: String,
    /// What it names, as shown to agents ("12 May 2023", "the weekend of
    /// 13 May 2023", "April 2023", "a few days before 15 May 2023").
    pub date: String,
    /// The first day it can mean.
    pub from: NaiveDate,
    /// The last day it can mean.
    pub to: NaiveDate,
}

/// Every relative time of `text`, said on `said`, resolved, in order.
pub fn resolved(text: &str, said: NaiveDate) -> Vec<ResolvedDate> {
    mentions(text, said)
        .into_iter()
        .map(|m| ResolvedDate {
            expression: text[m.span].to_owned(),
            date: m.when.to_string(),
            from: m.when.first_day(),
            to: m.when.last_day(),
        })
        .collect()
}

/// `text` with the date each relative expression names after it, in
/// parentheses ("last Friday (12 May 2023)"); unchanged (borrowed) when it
/// has none.
pub fn annotated(text: &str, said: NaiveDate) -> Cow<'_, str> {
    let found = mentions(text, said);
    if found.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16 * found.len());
    let mut from = 0;
    for mention in found {
        out.push_str(&text[from..mention.span.end]);
        // Writing to a String cannot fail.
        let _ = write!(out, " ({})", mention.when);
        from = mention.span.end;
    }
    out.push_str(&text[from..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    /// Monday 15 May 2023.
    fn monday() -> NaiveDate {
        date(2023, 5, 15)
    }

    fn resolved(text: &str, said: NaiveDate) -> Vec<String> {
        mentions(text, said)
            .into_iter()
            .map(|m| format!("{}={}", &text[m.span], m.when))
            .collect()
    }

    #[test]
    fn days_around_the_day_said() {
        assert_eq!(
            resolved(
                "Yesterday, today, this morning, last night, tomorrow and the day before yesterday.",
                monday()
            ),
            [
                "Yesterday=14 May 2023",
                "today=15 May 2023",
                "this morning=15 May 2023",
                "last night=14 May 2023",
                "tomorrow=16 May 2023",
                "the day before yesterday=13 May 2023",
            ]
        );
    }

    #[test]
    fn a_named_weekday_is_the_latest_before_or_the_first_after() {
        let text = "last Friday, this past Sunday, next Monday";
        assert_eq!(
            resolved(text, monday()),
            [
                "last Friday=12 May 2023",
                "this past Sunday=14 May 2023",
                "next Monday=22 May 2023"
            ]
        );
        // Said on a Friday, "last Friday" is a week before.
        assert_eq!(
            resolved("last Friday", date(2023, 5, 19)),
            ["last Friday=12 May 2023"]
        );
    }

    #[test]
    fn weekends_weeks_months_and_years() {
        let text = "last weekend, last week, last month, last year, next month, this year";
        assert_eq!(
            resolved(text, monday()),
            [
                "last weekend=the weekend of 13 May 2023",
                "last week=the week of 8 May 2023",
                "last month=April 2023",
                "last year=2022",
                "next month=June 2023",
                "this year=2023",
            ]
        );
        // Said on a Sunday, "last weekend" is the one before.
        assert_eq!(
            resolved("last weekend", date(2023, 5, 14)),
            ["last weekend=the weekend of 6 May 2023"]
        );
        // Across a year's end.
        assert_eq!(
            resolved("last month", date(2023, 1, 9)),
            ["last month=December 2022"]
        );
    }

    #[test]
    fn counts_ago() {
        let text = "two weeks ago, 3 days ago, a month ago, a couple of years ago, a few days ago";
        assert_eq!(
            resolved(text, monday()),
            [
                "two weeks ago=1 May 2023",
                "3 days ago=12 May 2023",
                "a month ago=April 2023",
                "a couple of years ago=2021",
                "a few days ago=a few days before 15 May 2023",
            ]
        );
    }

    #[test]
    fn what_is_not_fixed_by_the_day_said_is_left_alone() {
        for text in [
            "On Friday we met.",
            "The week before the race I rested.",
            "I have been busy lately.",
            "Last time I checked it was fine.",
            "It took weeks.",
            "The year ago figure was higher than the last one.",
        ] {
            assert!(mentions(text, monday()).is_empty(), "{text}");
        }
    }

    #[test]
    fn periods_are_comparable() {
        let found = mentions("last month and yesterday", monday());
        let (month, day) = (found[0].when, found[1].when);
        assert_eq!(month.first_day(), date(2023, 4, 1));
        assert_eq!(month.last_day(), date(2023, 4, 30));
        assert!(month.last_day() < day.first_day());
        assert_eq!(
            When::Weekend(date(2023, 5, 13)).last_day(),
            date(2023, 5, 14)
        );
        assert_eq!(When::Year(2022).last_day(), date(2022, 12, 31));
    }

    #[test]
    fn annotations_follow_their_expressions() {
        assert_eq!(
            annotated("Nothing dated here.", monday()),
            Cow::Borrowed("Nothing dated here.")
        );
        assert_eq!(
            annotated("Last month I moved; two weeks ago I started.", monday()),
            "Last month (April 2023) I moved; two weeks ago (1 May 2023) I started."
        );
    }
}
