//! The corpus benchmark's data and measurements (`cargo xtask bench
//! evidence`, and the test that keeps its figures): per persona a corpus
//! of posts with planted facts among distractors, recall of the planted
//! chunk, and what a scripted debate's takes show under EVIDENCE.
//!
//! Every persona has one planted fact per aspect, about the Altmarkt's
//! closure to cars. Each has four distractors: the same words about three
//! other squares with other numbers, and the same square with other
//! numbers (a forecast made before the vote); plus 24 posts on the
//! persona's other themes.
//!
//! Two corpora of that shape: [`TUNED`] (the Altmarkt), on which the
//! evidence search's BM25 share was chosen, and [`HELD_OUT`] (the
//! Domplatz's low-traffic zone: other facts, other distractor squares,
//! other themes and cities, other question wording), written afterwards
//! and never tuned on, to tell whether the figures carry over.

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::field_reassign_with_default
)]

use std::collections::HashMap;

use std::sync::{Arc, Mutex};

use agon_config::{AspectConfig, DebateConfig};
use agon_context::{Encoding, TiktokenCounter, TokenCounter};
use agon_core::PersonaId;
use agon_llm::{ChatModel, ChatRequest, ChatStream, PriceTable, ProviderError};
use agon_memory::corpus::{CorpusFormat, chunk, chunk_hash};
use agon_memory::{Memory, MemoryFilter};
use agon_orchestrator::{Models, RunControl};

/// One benchmark corpus: the debate's aspects, each persona's facts, the
/// distractor squares, and the posts on the personas' other themes.
pub struct CorpusSet {
    /// Its name in tables.
    pub name: &'static str,
    /// The square the planted facts are about.
    place: &'static str,
    /// The debate's aspects: label, description.
    pub aspects: [(&'static str, &'static str); 3],
    facts: [[Fact; 3]; 3],
    other_places: [&'static str; 3],
    filler: [[&'static str; 8]; 3],
    filler_cities: [&'static str; 3],
}

/// The corpus the evidence search was tuned on (the Altmarkt).
pub const TUNED: CorpusSet = CorpusSet {
    name: "Altmarkt (tuned on)",
    place: "Altmarkt",
    aspects: ASPECTS,
    facts: FACTS,
    other_places: OTHER_PLACES,
    filler: FILLER,
    filler_cities: FILLER_CITIES,
};

/// The debate's aspects: label, description.
pub const ASPECTS: [(&str, &str); 3] = [
    (
        "Transit",
        "Ridership, commute times and emergency access after the Altmarkt closed to cars.",
    ),
    (
        "Retail",
        "Shop takings, vacancies and prescriptions after the Altmarkt closure.",
    ),
    (
        "Health",
        "Noise, air and asthma admissions after the Altmarkt closure.",
    ),
];

/// A planted fact: `{place}` and `{n}` filled in; the question that needs
/// it, and the same question in other words (no shared key noun).
struct Fact {
    template: &'static str,
    planted: &'static str,
    others: [&'static str; 4],
    question: &'static str,
    paraphrase: &'static str,
}

const fn fact(
    template: &'static str,
    planted: &'static str,
    others: [&'static str; 4],
    question: &'static str,
    paraphrase: &'static str,
) -> Fact {
    Fact {
        template,
        planted,
        others,
        question,
        paraphrase,
    }
}

/// Per persona (Mara, Theo, Priya), one fact per aspect.
const FACTS: [[Fact; 3]; 3] = [
    [
        fact(
            "Tram ridership on the lines serving the {place} rose by {n} percent in the year after it closed to cars.",
            "23.7",
            ["4.1", "11.2", "2.8", "9.5"],
            "How much did tram ridership change after the Altmarkt closed?",
            "Did more people ride public transport once the old market square banned cars?",
        ),
        fact(
            "Shop vacancies around the {place} fell from 14 to {n} percent in the two years after the closure.",
            "6",
            ["12", "9", "13", "10"],
            "What happened to shop vacancies around the Altmarkt?",
            "Were there fewer empty storefronts near the square after it went car-free?",
        ),
        fact(
            "Street noise on the {place} dropped by {n} decibels once cars were gone.",
            "7.5",
            ["1.2", "2.9", "0.8", "3.3"],
            "Did the Altmarkt get quieter without cars?",
            "How loud is the market square now that traffic is gone?",
        ),
    ],
    [
        fact(
            "Commuters from the outer districts needed {n} minutes more per day to reach the {place} after the closure.",
            "41",
            ["6", "12", "9", "25"],
            "How much longer did outer-district commutes to the Altmarkt take?",
            "What did the car ban cost suburban workers in daily travel time?",
        ),
        fact(
            "Small shops at the {place} reported takings down {n} percent in the first six months after the closure.",
            "19",
            ["3", "7", "5", "30"],
            "Did small shops at the Altmarkt lose takings after the closure?",
            "How badly did independent retailers' sales suffer when the square went car-free?",
        ),
        fact(
            "The city spent {n} million euros on air monitoring and shuttles for the {place} closure.",
            "2.3",
            ["0.4", "0.9", "0.6", "5.0"],
            "What did air monitoring and shuttles for the Altmarkt closure cost?",
            "How much public money did the car ban's pollution sensors and replacement buses take?",
        ),
    ],
    [
        fact(
            "Ambulance response times to the {place} lengthened by {n} seconds after the closure until a fire lane opened.",
            "48",
            ["5", "12", "9", "90"],
            "How did ambulance response times to the Altmarkt change?",
            "Did emergency crews reach patients in the square more slowly after the ban?",
        ),
        fact(
            "Pharmacies at the {place} filled {n} percent fewer prescriptions in the first year after the closure.",
            "12",
            ["2", "4", "3", "20"],
            "Did pharmacies at the Altmarkt fill fewer prescriptions?",
            "Were fewer medicines dispensed in the square's chemists after cars were banned?",
        ),
        fact(
            "Asthma admissions among children living near the {place} fell by {n} percent after the closure.",
            "31",
            ["3", "8", "5", "15"],
            "What happened to children's asthma admissions near the Altmarkt?",
            "Did fewer kids go to hospital with breathing problems after the square went car-free?",
        ),
    ],
];

/// The other squares of the distractors.
const OTHER_PLACES: [&str; 3] = ["Nordplatz", "Kornmarkt", "Hafenviertel"];

/// Posts on each persona's other themes: `{city}` and `{n}` filled in.
const FILLER: [[&str; 8]; 3] = [
    [
        "Cycle lanes in {city} carried {n} riders a day by June.",
        "{city} planted {n} street trees along its ring road last year.",
        "Bus lanes in {city} cut the average bus trip by {n} minutes.",
        "The pedestrian bridge in {city} counts {n} crossings on a weekday.",
        "{city} turned {n} parking spaces into parklets this spring.",
        "Night buses in {city} now run every {n} minutes on weekends.",
        "A school street in {city} closed to cars for {n} minutes at drop-off.",
        "{city} added {n} kilometres of protected bike track.",
    ],
    [
        "Congestion pricing in {city} cut cordon traffic by {n} percent.",
        "Fuel taxes in {city} rose by {n} cents a litre over the decade.",
        "The {city} parking levy raised {n} million euros last year.",
        "Office rents in central {city} moved {n} percent against the suburbs.",
        "A resident dividend in {city} pays {n} euros a year from road charges.",
        "{city} commuters spend {n} percent of income on transport.",
        "Car ownership in {city} fell by {n} per thousand residents.",
        "Delivery firms in {city} priced the charge at {n} cents a parcel.",
    ],
    [
        "Particulate levels in {city} fell {n} percent on car-free Sundays.",
        "Road deaths in {city} dropped to {n} last year.",
        "{city} clinics report {n} percent of visits made on foot.",
        "Heat-related admissions in {city} rose by {n} in the summer.",
        "Noise complaints in {city} fell by {n} after the speed limit.",
        "{city} school runs by bike rose to {n} percent.",
        "Cardiology referrals in {city} dropped by {n} percent.",
        "{city} measured {n} micrograms of nitrogen dioxide at the station.",
    ],
];

const FILLER_CITIES: [&str; 3] = ["Ravensburg", "Lindau", "Weiden"];

/// The corpus written after the tuning and never tuned on: the Domplatz's
/// low-traffic zone.
pub const HELD_OUT: CorpusSet = CorpusSet {
    name: "Domplatz (held out)",
    place: "Domplatz",
    aspects: [
        (
            "Traffic",
            "Bus speeds, deliveries and fire engines after the Domplatz low-traffic zone opened.",
        ),
        (
            "Business",
            "Restaurant seats, rents and market stalls after the Domplatz zone.",
        ),
        (
            "Wellbeing",
            "School journeys, injuries and enforcement after the Domplatz zone.",
        ),
    ],
    facts: [
        [
            fact(
                "Bus journeys across the {place} became {n} percent faster after the low-traffic zone opened.",
                "18",
                ["2", "5", "3", "11"],
                "How much faster did buses cross the Domplatz after the zone opened?",
                "Did public transport get quicker through the cathedral square once through-traffic was barred?",
            ),
            fact(
                "Outdoor restaurant seats around the {place} grew from 300 to {n} within a year of the zone.",
                "720",
                ["340", "410", "380", "500"],
                "How many outdoor restaurant seats are there around the Domplatz now?",
                "Did cafés put out more tables near the cathedral once traffic was filtered?",
            ),
            fact(
                "Children walking or cycling to school near the {place} rose to {n} percent after the zone.",
                "64",
                ["31", "38", "35", "45"],
                "What share of children walk or cycle to school near the Domplatz?",
                "Do more pupils get to class on foot or by bike since the cathedral square was filtered?",
            ),
        ],
        [
            fact(
                "Delivery vans serving the {place} spent {n} minutes longer per round after the zone opened.",
                "27",
                ["4", "8", "6", "15"],
                "How much longer are delivery rounds to the Domplatz?",
                "What did the filter cost couriers in extra time per trip?",
            ),
            fact(
                "Ground-floor rents on the {place} rose by {n} percent in the two years after the zone.",
                "16",
                ["2", "5", "3", "9"],
                "Did ground-floor rents on the Domplatz rise after the zone?",
                "Are shop leases on the cathedral square dearer since through-traffic stopped?",
            ),
            fact(
                "Enforcement cameras for the {place} zone cost {n} million euros to install and run.",
                "1.8",
                ["0.3", "0.5", "0.4", "3.1"],
                "What did the Domplatz enforcement cameras cost?",
                "How much did the city pay for the plate-reading equipment that polices the filter?",
            ),
        ],
        [
            fact(
                "Fire engines reached the {place} {n} seconds later on average until the bollards were made retractable.",
                "35",
                ["4", "9", "6", "70"],
                "How much later did fire engines reach the Domplatz?",
                "Were firefighters slowed getting to the cathedral square after the filter went in?",
            ),
            fact(
                "The weekly farmers' market on the {place} added {n} stalls once cars were filtered out.",
                "22",
                ["3", "6", "4", "12"],
                "How many stalls did the Domplatz farmers' market add?",
                "Did more growers come to sell produce at the cathedral square once through-traffic ended?",
            ),
            fact(
                "Pedestrian injuries on the {place} fell by {n} percent in the first two years of the zone.",
                "44",
                ["6", "12", "9", "20"],
                "Did pedestrian injuries on the Domplatz fall?",
                "Are fewer people on foot hurt in road collisions at the cathedral square since the filter?",
            ),
        ],
    ],
    other_places: ["Marktplatz", "Schlossplatz", "Bahnhofsvorplatz"],
    filler: [
        [
            "{city} opened {n} new pocket parks in its old town.",
            "Bike parking at {city} station grew to {n} spaces.",
            "{city} lowered the speed limit to 30 on {n} streets.",
            "A tram extension in {city} added {n} stops.",
            "{city} repaved {n} squares with permeable stone.",
            "Car-share cars in {city} number {n} this year.",
            "{city} painted {n} new zebra crossings.",
            "Benches on the high street of {city} went up to {n}.",
        ],
        [
            "Parking fines in {city} brought in {n} thousand euros a month.",
            "{city} businesses paid {n} euros a year for loading permits.",
            "Retail footfall in {city} moved {n} percent year on year.",
            "{city} spent {n} million euros on road maintenance.",
            "Taxi fares in {city} rose {n} percent after the fuel levy.",
            "Land values near {city} station rose {n} percent.",
            "A {city} survey found {n} percent of shoppers arrive by car.",
            "The tourism tax of {city} raised {n} million euros.",
        ],
        [
            "Cycling injuries in {city} rose to {n} last year.",
            "{city} recorded {n} days above the ozone limit.",
            "Hospital parking in {city} costs {n} euros a day.",
            "GP waiting times in {city} average {n} days.",
            "{city} counted {n} hay-fever alerts in spring.",
            "Obesity among ten-year-olds in {city} is {n} percent.",
            "{city} has {n} ambulance stations.",
            "Sleep complaints about traffic noise in {city} fell by {n}.",
        ],
    ],
    filler_cities: ["Passau", "Bamberg", "Coburg"],
};

/// The personas of the benchmark: ids in [`FACTS`] order.
pub const PERSONAS: [&str; 3] = ["mara", "theo", "priya"];

/// One persona's corpus of `set` as JSON lines, and its planted facts
/// (aspect index, text, question, paraphrase).
pub fn corpus(
    set: &CorpusSet,
    persona: usize,
) -> (String, Vec<(usize, String, &'static str, &'static str)>) {
    let mut posts: Vec<String> = Vec::new();
    let mut planted = Vec::new();
    for (aspect, f) in set.facts[persona].iter().enumerate() {
        let fill = |place: &str, n: &str| f.template.replace("{place}", place).replace("{n}", n);
        let text = fill(set.place, f.planted);
        posts.push(text.clone());
        planted.push((aspect, text, f.question, f.paraphrase));
        for (place, n) in set.other_places.iter().zip(f.others) {
            posts.push(fill(place, n));
        }
        posts.push(format!(
            "A forecast before the vote said: {}",
            fill(set.place, f.others[3])
        ));
    }
    for (i, template) in set.filler[persona].iter().enumerate() {
        for (j, city) in set.filler_cities.iter().enumerate() {
            posts.push(
                template
                    .replace("{city}", city)
                    .replace("{n}", &(3 + 7 * i + 13 * j).to_string()),
            );
        }
    }
    // Interleaved so that a planted fact is not always first.
    let n = posts.len();
    let order: Vec<usize> = (0..n).map(|i| (i * 7) % n).collect();
    let jsonl = order
        .iter()
        .map(|&i| serde_json::json!({ "text": posts[i] }).to_string())
        .collect::<Vec<_>>()
        .join("\n");
    (jsonl, planted)
}

/// A planted fact once indexed: whose, which aspect, its citable hash.
#[derive(Debug, Clone)]
pub struct PlantedChunk {
    pub persona: PersonaId,
    pub aspect: usize,
    pub hash: String,
    pub question: &'static str,
    pub paraphrase: &'static str,
}

/// Indexes every persona's corpus of `set`; returns the planted chunks and
/// the number of chunks per persona.
pub async fn index(memory: &Memory, set: &CorpusSet) -> (Vec<PlantedChunk>, usize) {
    let mut out = Vec::new();
    let mut per_persona = 0;
    for (i, id) in PERSONAS.iter().enumerate() {
        let persona = PersonaId::new(*id);
        let (jsonl, planted) = corpus(set, i);
        let chunks = chunk(&jsonl, CorpusFormat::JsonLines, "posts.jsonl").unwrap();
        per_persona = chunks.len();
        memory
            .add_corpus(&persona, "posts.jsonl", &chunks, chrono::Utc::now())
            .await
            .unwrap();
        for (aspect, text, question, paraphrase) in planted {
            out.push(PlantedChunk {
                persona: persona.clone(),
                aspect,
                hash: chunk_hash(&persona, &text),
                question,
                paraphrase,
            });
        }
    }
    (out, per_persona)
}

/// Recall of the planted chunk at 1 and 5 for one method, over three
/// queries per fact (the take's query: the aspect; the fact's question;
/// the question in other words).
#[derive(Debug, Clone, Copy, Default)]
pub struct RecallRow {
    pub at1: f64,
    /// What EVIDENCE shows (3 passages).
    pub at3: f64,
    pub at5: f64,
    pub queries: usize,
}

/// The queries of a planted fact: the aspect as a take asks (`LABEL:
/// description`), its question, and the question in other words.
pub fn queries(set: &CorpusSet, p: &PlantedChunk) -> [String; 3] {
    let (label, description) = set.aspects[p.aspect];
    [
        format!("{}: {}", label.to_uppercase(), description),
        p.question.to_owned(),
        p.paraphrase.to_owned(),
    ]
}

/// Recall of dense search alone, of BM25 alone and of Agon's evidence
/// search (each under the persona's corpus filter), in that order.
pub async fn recall(
    memory: &Memory,
    set: &CorpusSet,
    planted: &[PlantedChunk],
) -> [(&'static str, RecallRow); 3] {
    let mut rows = [RecallRow::default(); 3];
    for p in planted {
        let filter = MemoryFilter::corpus(p.persona.clone());
        let target = agon_memory::corpus::chunk_memory_id(&p.persona, &p.hash);
        for q in queries(set, p) {
            let agon: Vec<String> = memory
                .evidence(&p.persona, &q, 5)
                .await
                .unwrap()
                .into_iter()
                .map(|e| agon_memory::corpus::chunk_memory_id(&p.persona, &e.hash))
                .collect();
            let qv = memory
                .embed_documents(std::slice::from_ref(&q))
                .await
                .unwrap();
            let mut qv = qv.into_iter().next().unwrap();
            agon_memory::normalize(&mut qv).unwrap();
            let dense: Vec<String> = memory
                .index()
                .search(&qv, &filter, 5)
                .await
                .unwrap()
                .into_iter()
                .map(|c| c.memory.id)
                .collect();
            let lexical: Vec<String> = memory
                .index()
                .lexical(&q, &filter, 5)
                .await
                .unwrap()
                .into_iter()
                .map(|h| h.id)
                .collect();
            for (row, ranked) in rows.iter_mut().zip([agon, dense, lexical]) {
                row.queries += 1;
                if ranked.first() == Some(&target) {
                    row.at1 += 1.0;
                }
                if ranked.iter().take(3).any(|id| id == &target) {
                    row.at3 += 1.0;
                }
                if ranked.iter().take(5).any(|id| id == &target) {
                    row.at5 += 1.0;
                }
            }
        }
    }
    for row in &mut rows {
        row.at1 /= row.queries as f64;
        row.at3 /= row.queries as f64;
        row.at5 /= row.queries as f64;
    }
    // The strongest baseline first.
    [("dense", rows[1]), ("bm25", rows[2]), ("agon", rows[0])]
}

/// What a [`Prompts`] model appends to an utterance, given its prompt and
/// how many utterances it appended to before (none: `None`).
pub type Append = fn(&str, usize) -> Option<String>;

/// Records each utterance prompt with its purpose (`utterance (take/…)`),
/// and appends what `append` gives to the utterance.
pub struct Prompts<M> {
    pub inner: M,
    pub seen: Mutex<Vec<(String, String)>>,
    append: Option<Append>,
    appended: std::sync::atomic::AtomicUsize,
}

impl<M> Prompts<M> {
    /// Records, changes nothing.
    pub fn new(inner: M) -> Self {
        Self {
            inner,
            seen: Mutex::new(Vec::new()),
            append: None,
            appended: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Records, and appends `append`'s text to utterances.
    pub fn appending(inner: M, append: Append) -> Self {
        Self {
            append: Some(append),
            ..Self::new(inner)
        }
    }
}

#[async_trait::async_trait]
impl<M: ChatModel> ChatModel for Prompts<M> {
    fn provider(&self) -> &str {
        self.inner.provider()
    }
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }
    async fn complete(
        &self,
        request: ChatRequest,
    ) -> Result<agon_llm::ChatResponse, ProviderError> {
        self.inner.complete(request).await
    }
    async fn complete_json(
        &self,
        request: ChatRequest,
        schema: &agon_llm::JsonSchema,
    ) -> Result<agon_llm::JsonResponse, ProviderError> {
        self.inner.complete_json(request, schema).await
    }
    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, ProviderError> {
        let user: String = request
            .messages
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let extra = self.append.and_then(|append| {
            let n = self.appended.load(std::sync::atomic::Ordering::Relaxed);
            append(&user, n)
        });
        self.seen
            .lock()
            .unwrap()
            .push((request.purpose.clone().unwrap_or_default(), user));
        let Some(extra) = extra else {
            return self.inner.stream(request).await;
        };
        self.appended
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut chunks: Vec<_> =
            futures::StreamExt::collect(self.inner.stream(request).await?).await;
        let at = chunks.len().saturating_sub(1);
        chunks.insert(
            at,
            Ok(agon_llm::ChatChunk {
                delta: extra,
                usage: None,
                finish_reason: None,
                model: None,
                timing: None,
            }),
        );
        Ok(Box::pin(futures::stream::iter(chunks)))
    }
}

/// What the takes of the scripted debate showed.
#[derive(Debug, Clone, Copy, Default)]
pub struct TakeFigures {
    /// Takes of personas with a corpus.
    pub takes: usize,
    /// Takes whose EVIDENCE held the planted fact of the take's aspect.
    pub with_planted: usize,
    /// Mean tokens of the EVIDENCE section.
    pub evidence_tokens: f64,
    /// Mean share of the take's prompt (context and instruction) EVIDENCE took.
    pub mean_share: f64,
    /// Largest share.
    pub max_share: f64,
}

/// The EVIDENCE section of a prompt (heading to the next section).
pub fn evidence_section(prompt: &str) -> Option<&str> {
    let start = prompt.find("── EVIDENCE: YOUR SOURCES")?;
    let rest = &prompt[start..];
    let end = rest[3..].find("\n\n").map_or(rest.len(), |i| i + 3);
    Some(&rest[..end])
}

/// Runs the scripted structured debate (3 personas, the three aspects, 2
/// minirounds, default budget) with every persona's corpus indexed, and
/// measures its takes.
pub async fn debate(url: &str, memory: Memory, planted: &[PlantedChunk]) -> TakeFigures {
    let store = agon_store::open(url).await.unwrap();
    let orch = agon_app::orchestrator_for(store).with_memory(memory);
    let mut config = DebateConfig::default();
    config.topic = "Should our city keep the Altmarkt closed to cars?".into();
    config.personas = agon_config::default_personas();
    config.aspects = ASPECTS
        .iter()
        .map(|(label, description)| AspectConfig {
            label: (*label).into(),
            description: (*description).into(),
        })
        .collect();
    config.minirounds = 2;
    config.crux.max_rooms = 1;
    let id = orch.create(&config).await.unwrap();
    let model = Arc::new(Prompts::new(agon_testkit::ScriptedModel::new(
        std::time::Duration::from_millis(5),
    )));
    let models = Models::uniform(
        model.clone() as Arc<dyn ChatModel>,
        PriceTable::with_defaults(),
    );
    orch.run(&id, &models, RunControl::default()).await.unwrap();
    let counter = TiktokenCounter::new(Encoding::O200kBase);
    // Configured aspects are `aspect-1`, `aspect-2`, … in order.
    let labels: HashMap<String, usize> = (0..ASPECTS.len())
        .map(|i| (format!("aspect-{}", i + 1), i))
        .collect();
    let mut f = TakeFigures::default();
    let seen = model.seen.lock().unwrap().clone();
    for (purpose, prompt) in &seen {
        // `utterance (take/ASPECT/MINIROUND/PERSONA)`
        let Some(key) = purpose
            .strip_prefix("utterance (take/")
            .and_then(|k| k.strip_suffix(')'))
        else {
            continue;
        };
        let parts: Vec<&str> = key.split('/').collect();
        let (Some(aspect), Some(persona)) = (parts.first(), parts.last()) else {
            continue;
        };
        let Some(p) = planted
            .iter()
            .find(|p| p.persona.as_str() == *persona && labels.get(*aspect) == Some(&p.aspect))
        else {
            continue;
        };
        f.takes += 1;
        let Some(section) = evidence_section(prompt) else {
            continue;
        };
        if section.contains(&format!("[E:{}]", p.hash)) {
            f.with_planted += 1;
        }
        let tokens = counter.count(section) as f64;
        let share = tokens / counter.count(prompt).max(1) as f64;
        f.evidence_tokens += tokens;
        f.mean_share += share;
        f.max_share = f.max_share.max(share);
    }
    if f.takes > 0 {
        f.evidence_tokens /= f.takes as f64;
        f.mean_share /= f.takes as f64;
    }
    f
}
