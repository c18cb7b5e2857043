//! The requirements benchmark's fixed set: problem statements written for
//! Agon with planted requirements, explicit (on a line with one of
//! dialectic's keywords: must, shall, required, needs to, critical,
//! essential) and implicit (stated without a keyword, or only in a
//! clarification answer), and how a method's items are scored against them.

#![allow(dead_code)]

use agon_core::{
    Blackboard, DebateEvent, DialogueMessage, MessageId, MessageKind, Persona, PersonaRole, Topic,
};

/// A planted requirement.
pub struct Planted {
    /// What it is, for the table.
    pub label: &'static str,
    /// Words that an item tracking it contains, every one (lowercase;
    /// digits with their thousands separators removed).
    pub terms: &'static [&'static str],
    /// Whether it is stated on a line with one of dialectic's keywords.
    pub explicit: bool,
}

/// A problem of the set.
pub struct Problem {
    /// Its name.
    pub name: &'static str,
    /// The problem statement.
    pub text: &'static str,
    /// Clarifying questions and their answers.
    pub clarifications: &'static [(&'static str, &'static str)],
    /// The requirements planted in it.
    pub planted: &'static [Planted],
}

const fn p(label: &'static str, terms: &'static [&'static str], explicit: bool) -> Planted {
    Planted {
        label,
        terms,
        explicit,
    }
}

/// The set: five problems, 26 planted requirements (9 explicit, 17 implicit).
pub const SET: [Problem; 5] = [
    Problem {
        name: "grading",
        text: "A university wants to automate the grading of programming assignments for 300+ students per year.\n\
               Students must be able to upload their source code, which is run and graded.\n\
               Grades and runs must be persistent and auditable.\n\
               Graders run untrusted student code, so each run is isolated from the others.\n\
               Results appear in the university's LMS within ten minutes of submission.",
        clarifications: &[
            ("Which languages are graded?", "Python and Java only."),
            (
                "What is the peak load?",
                "About 2,000 submissions in the hour before a deadline.",
            ),
        ],
        planted: &[
            p("upload source code", &["upload", "source"], true),
            p("persistent, auditable grades", &["auditable"], true),
            p("isolated runs", &["isolated"], false),
            p(
                "results in the LMS within ten minutes",
                &["lms", "ten"],
                false,
            ),
            p("Python and Java", &["python", "java"], false),
            p("2,000 submissions an hour", &["2000"], false),
        ],
    },
    Problem {
        name: "rate limiter",
        text: "Design a rate limiter for a public REST API.\n\
               Each API key shall be limited to 100 requests per second.\n\
               The limiter runs in front of 12 stateless gateway nodes.\n\
               Rejected requests get HTTP 429 with a Retry-After header.\n\
               It is critical that a limiter failure never blocks legitimate traffic.",
        clarifications: &[(
            "Are limits per key or per IP?",
            "Per key; anonymous calls are limited per IP, at 10 per second.",
        )],
        planted: &[
            p("100 requests per second per key", &["100"], true),
            p("12 gateway nodes", &["12"], false),
            p("429 with Retry-After", &["429"], false),
            p("a failure never blocks traffic", &["failure"], true),
            p("anonymous calls at 10/s per IP", &["ip", "10"], false),
        ],
    },
    Problem {
        name: "payments ledger",
        text: "Build the ledger behind a payments app.\n\
               Balances are held in EUR and USD.\n\
               Every transfer must be atomic: money is never created or lost.\n\
               Customer data stays in the EU.\n\
               The ledger needs to handle 5,000 transfers per second at peak.",
        clarifications: &[(
            "How long are records kept?",
            "Ten years, for the regulator.",
        )],
        planted: &[
            p("balances in EUR and USD", &["eur", "usd"], false),
            p("atomic transfers", &["atomic"], true),
            p("customer data in the EU", &["eu"], false),
            p("5,000 transfers per second", &["5000"], true),
            p("records kept ten years", &["ten", "years"], false),
        ],
    },
    Problem {
        name: "chat moderation",
        text: "Design the moderation pipeline of a chat app with 2 million daily users.\n\
               Messages flagged by users are reviewed by a person within 24 hours.\n\
               The classifier must not add more than 50 ms to message delivery.\n\
               Moderators see no personal data beyond the message and a pseudonymous id.\n\
               Appeals are essential: a banned user can appeal once per ban.",
        clarifications: &[(
            "Which languages at launch?",
            "English, Spanish and Portuguese.",
        )],
        planted: &[
            p("flagged messages reviewed within 24 hours", &["24"], false),
            p("at most 50 ms added", &["50"], true),
            p("no personal data for moderators", &["pseudonymous"], false),
            p("one appeal per ban", &["appeal"], true),
            p("Spanish and Portuguese", &["spanish", "portuguese"], false),
        ],
    },
    Problem {
        name: "sensor telemetry",
        text: "Collect telemetry from 40,000 field sensors that report every 30 seconds.\n\
               Sensors sit on cellular links that drop for hours at a time.\n\
               Readings are kept for 2 years and queried by sensor and time range.\n\
               The system is required to alert an operator within one minute of a threshold breach.",
        clarifications: &[(
            "Can the sensors buffer readings?",
            "Yes, up to 6 hours of readings.",
        )],
        planted: &[
            p("40,000 sensors every 30 s", &["40000"], false),
            p("links that drop for hours", &["cellular"], false),
            p("readings kept 2 years", &["2", "years"], false),
            p("alert within one minute", &["alert", "minute"], true),
            p("sensors buffer 6 hours", &["6", "hours"], false),
        ],
    },
];

/// Lowercase words of `text`, thousands separators removed (`5,000` is
/// `5000`).
pub fn words(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut cleaned = String::new();
    for (i, c) in chars.iter().enumerate() {
        let between_digits = *c == ','
            && i > 0
            && chars[i - 1].is_ascii_digit()
            && chars.get(i + 1).is_some_and(char::is_ascii_digit);
        if !between_digits {
            cleaned.push(*c);
        }
    }
    cleaned
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether `item` tracks `planted` (contains every one of its terms).
pub fn tracks(item: &str, planted: &Planted) -> bool {
    let w = words(item);
    planted.terms.iter().all(|t| w.iter().any(|x| x == t))
}

/// A method's score on the set.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Score {
    /// Explicit requirements tracked, of all explicit.
    pub explicit: (usize, usize),
    /// Implicit requirements tracked, of all implicit.
    pub implicit: (usize, usize),
    /// Requirements tracked by an item that tracks no other planted one
    /// (what a coverage verdict per requirement needs).
    pub own_item: usize,
    /// Items the method listed.
    pub items: usize,
}

impl Score {
    /// Tracked of all planted.
    pub fn overall(&self) -> f64 {
        (self.explicit.0 + self.implicit.0) as f64 / (self.explicit.1 + self.implicit.1) as f64
    }

    /// A share as a percentage.
    pub fn pct((n, of): (usize, usize)) -> String {
        format!("{:.0} % ({n}/{of})", 100.0 * n as f64 / of as f64)
    }

    /// Adds `items` of `problem`.
    pub fn add(&mut self, problem: &Problem, items: &[String]) {
        self.items += items.len();
        for planted in problem.planted {
            let hits: Vec<&String> = items.iter().filter(|i| tracks(i, planted)).collect();
            let slot = if planted.explicit {
                &mut self.explicit
            } else {
                &mut self.implicit
            };
            slot.1 += 1;
            if !hits.is_empty() {
                slot.0 += 1;
            }
            if hits.iter().any(|item| {
                problem
                    .planted
                    .iter()
                    .filter(|other| tracks(item, other))
                    .count()
                    == 1
            }) {
                self.own_item += 1;
            }
        }
    }
}

/// dialectic's keyword inference over each problem (the clarifications are
/// not read, as in dialectic).
pub fn keyword_score() -> Score {
    let mut score = Score::default();
    for problem in &SET {
        let items: Vec<String> = agon_extract::infer_major_requirements(problem.text)
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        score.add(problem, &items);
    }
    score
}

/// A started debate on `problem`, with its clarifications asked and
/// answered: what the requirements call reads.
pub fn board(problem: &Problem) -> Blackboard {
    let t = chrono::DateTime::UNIX_EPOCH;
    let mut events = vec![DebateEvent::DebateStarted {
        debate: "bench".into(),
        topic: Topic::new(problem.text),
        aspects: vec![],
        personas: vec![
            Persona::debater("arch", "Architect", "architect", ""),
            Persona {
                role: PersonaRole::Judge,
                ..Persona::debater("judge", "Judge", "generalist", "")
            },
        ],
        time: t,
        protocol: Some(agon_core::ProtocolKind::Dialectic),
    }];
    for (i, (q, a)) in problem.clarifications.iter().enumerate() {
        let question = MessageId::new(format!("q{i}"));
        for (id, kind, content, reply_to) in [
            (
                question.clone(),
                MessageKind::ClarificationQuestion,
                *q,
                None,
            ),
            (
                MessageId::new(format!("a{i}")),
                MessageKind::ClarificationAnswer,
                *a,
                Some(question.clone()),
            ),
        ] {
            events.push(DebateEvent::MessageAppended {
                message: DialogueMessage {
                    id,
                    persona: "arch".into(),
                    kind,
                    aspect: None,
                    round: 0,
                    miniround: None,
                    crux_room: None,
                    content: content.to_owned(),
                    time: t,
                    reply_to,
                    meta: None,
                },
            });
        }
    }
    Blackboard::replay(&events).unwrap_or_else(|(i, e)| panic!("event {i}: {e}"))
}
