#!/usr/bin/env python3
"""Writes data/locomo-synthetic.json: a small LoCoMo-format dataset with
planted facts across sessions, for agon-memory's recall tests and harness.

Each sample is a two-person conversation over several sessions. Facts are
planted in single turns (some facts need two turns), surrounded by filler
chat and by distractor turns that reuse a fact's words (to mislead BM25) or
its meaning (to mislead dense search). Questions come in LoCoMo's five
categories: 1 multi-hop, 2 temporal, 3 open-domain/paraphrase, 4 single-hop,
5 adversarial (asks about the wrong speaker). Deterministic (seeded).
"""
import json
import random
import sys

SAMPLES = [
    ("Caroline", "Melanie", 11),
    ("Jon", "Gina", 22),
    ("Priya", "Tomas", 33),
]

CITIES = ["Porto", "Tallinn", "Ghent", "Bergen", "Lyon", "Kraków", "Bologna", "Leiden"]
SIBLINGS = [("sister", "Lena"), ("brother", "Marek"), ("sister", "Odile"), ("brother", "Ravi")]
PETS = [("dog", "Biscuit"), ("cat", "Juniper"), ("dog", "Pepper"), ("parrot", "Kiwi")]
HOBBIES = [("pottery", "Ines"), ("salsa dancing", "Mateo"), ("bouldering", "Freya"), ("watercolor painting", "Haruki")]
BOOKS = ["The Overstory", "Piranesi", "Klara and the Sun", "The Dispossessed"]
JOBS = [("veterinary clinic", "night shifts"), ("public library", "archive digitization"), ("bike repair shop", "wheel building"), ("bakery", "sourdough starters")]
ALLERGIES = ["peanuts", "shellfish", "kiwi fruit", "sesame"]
CARS = ["a secondhand Corolla", "an electric Zoe", "a rusty Volvo estate", "a tiny Fiat Panda"]

FILLER = [
    "Haha, that sounds like a lot of fun!",
    "I know what you mean, this week has been long.",
    "Did you catch the game on Sunday?",
    "The weather has been so strange lately, rain then sun then rain.",
    "I've been trying to drink more water and sleep earlier.",
    "We ordered takeaway again, nobody wanted to cook.",
    "Work is busy but manageable, nothing new really.",
    "I finally cleaned out the garage, found so much junk.",
    "My phone screen cracked again, third time this year.",
    "We watched a documentary about octopuses, they are so clever.",
    "I'm thinking about repainting the kitchen, maybe a pale green.",
    "Traffic this morning was awful, took forever to get anywhere.",
    "That's wonderful, I'm really happy for you.",
    "Oh no, I hope it gets better soon.",
    "I've been listening to a podcast about ancient Rome.",
    "The kids have a school play next month, lots of costume drama.",
    "I tried a new recipe with lentils, surprisingly good.",
    "We're planning a small barbecue if the weather holds.",
    "My back has been sore from sitting at the desk all day.",
    "I signed up for a newsletter about gardening, mostly tomatoes.",
    "Honestly I just want a quiet weekend at home.",
    "The new cafe downtown makes excellent cinnamon buns.",
    "I keep forgetting to call the plumber about the leak.",
    "We went for a long walk by the river, it was lovely.",
    "My laptop is so slow, I need to replace it eventually.",
    "Yes! Let's catch up properly soon.",
    "I read an article about sleep and screens, scary stuff.",
    "Our neighbors are renovating, the drilling never stops.",
    "I bought new running shoes, my old ones fell apart.",
    "It's been ages since I went to a concert.",
]

def distractors(rng, a, b, city, sib, pet, hobby, book, job, allergy, car):
    """Turns that share words or meaning with the facts but answer nothing."""
    other_city = rng.choice([c for c in CITIES if c != city])
    return [
        f"My neighbor's {sib[0]} moved house last year, somewhere near the station.",
        f"I'd love to visit {other_city} someday, people say the old town is beautiful.",
        f"A coworker keeps talking about relocating abroad, but she never does it.",
        f"The {pet[0]} next door barks at every delivery van.",
        f"There's a {hobby[0]} class advertised at the community center, looks expensive.",
        f"Someone at work recommended a novel but I forgot the title.",
        f"I walked past a {job[0]} today and it smelled amazing.",
        f"The menu said it might contain traces of nuts, so I skipped dessert.",
        f"My uncle finally sold his old car, it barely started anymore.",
        f"Teachers at the kids' school are planning a strike next month.",
        f"I saw a poster for a photography club but never went.",
        f"We talked about adopting an animal but the landlord said no.",
    ]

def sample(a, b, seed):
    rng = random.Random(seed)
    city = rng.choice(CITIES)
    sib = rng.choice(SIBLINGS)
    pet = rng.choice(PETS)
    hobby = rng.choice(HOBBIES)
    book = rng.choice(BOOKS)
    job = rng.choice(JOBS)
    allergy = rng.choice(ALLERGIES)
    car = rng.choice(CARS)
    b_city = rng.choice([c for c in CITIES if c != city])
    # (session, speaker, text, key) — the planted facts.
    facts = [
        (1, a, f"Big news: my {sib[0]} {sib[1]} finally moved to {city}, she says the tiles and the sea air are wonderful.", "sibling"),
        (1, a, f"I started taking {hobby[0]} lessons on Thursday evenings, my hands are covered in it.", "hobby1"),
        (2, b, f"We adopted a {pet[0]} from the shelter on Saturday, we named it {pet[1]}.", "pet"),
        (2, a, f"I just finished reading {book}, I cried at the ending.", "book"),
        (3, b, f"I got a new job at the {job[0]}, I'll be doing {job[1]} to start.", "job"),
        (3, a, f"Found out the hard way that I'm allergic to {allergy}, ended up in urgent care.", "allergy"),
        (4, a, f"My {hobby[0]} teacher {hobby[1]} said my work could go in the spring exhibition.", "hobby2"),
        (4, b, f"We finally bought {car} so I don't have to bike in the rain.", "car"),
        (5, b, f"My parents are moving to {b_city} to be closer to the coast.", "parents"),
        (5, a, f"{sib[1]} called from {city}, she wants us to visit in September.", "visit"),
    ]
    questions = [
        (f"Where did {a}'s {sib[0]} move to?", city, ["sibling"], 4),
        (f"Which city is {sib[1]} living in now?", city, ["sibling"], 4),
        (f"Which town did {a}'s sibling relocate to?", city, ["sibling"], 3),
        (f"What creative class does {a} attend during the week?", hobby[0], ["hobby1"], 3),
        (f"What is the name of the animal {b} took home from the shelter?", pet[1], ["pet"], 4),
        (f"When did {b} adopt {pet[1]}?", "on Saturday, in session 2", ["pet"], 2),
        (f"Which novel made {a} cry?", book, ["book"], 3),
        (f"Where does {b} work now?", job[0], ["job"], 4),
        (f"What food should {a} avoid?", allergy, ["allergy"], 3),
        (f"Why did {a} go to urgent care?", f"allergic reaction to {allergy}", ["allergy"], 4),
        (f"Who is the instructor of the class {a} started taking?", hobby[1], ["hobby1", "hobby2"], 1),
        (f"Where might {a}'s {hobby[0]} be shown?", "the spring exhibition", ["hobby2"], 4),
        (f"What vehicle did {b} buy?", car, ["car"], 4),
        (f"Why did {b} stop biking in the rain?", f"bought {car}", ["car"], 3),
        (f"Where are {b}'s parents moving?", b_city, ["parents"], 4),
        (f"When does {sib[1]} want visitors?", "September", ["visit"], 2),
        (f"Who invited {a} to come visit in September, and from which city?", f"{sib[1]}, {city}", ["visit", "sibling"], 1),
        (f"Where did {b}'s {sib[0]} move to?", "not mentioned", ["sibling"], 5),
        (f"What pet did {a} adopt?", "not mentioned", ["pet"], 5),
        (f"Which book did {b} finish reading?", "not mentioned", ["book"], 5),
        (f"When did {a} begin the evening lessons?", "session 1", ["hobby1"], 2),
        (f"What will {b} do first in the new position?", job[1], ["job"], 3),
    ]
    noise = distractors(rng, a, b, city, sib, pet, hobby, book, job, allergy, car)
    conversation = {"speaker_a": a, "speaker_b": b}
    fact_ids = {}
    sessions = 6
    for s in range(1, sessions + 1):
        turns = []
        planted = [f for f in facts if f[0] == s]
        count = 26
        slots = sorted(rng.sample(range(2, count - 2), len(planted)))
        noise_slots = set(rng.sample(range(count), 4))
        speaker = a if s % 2 else b
        k = 0
        for t in range(count):
            dia = f"D{s}:{t + 1}"
            if k < len(planted) and t == slots[k]:
                _, who, text, key = planted[k]
                fact_ids[key] = dia
                turns.append({"speaker": who, "dia_id": dia, "text": text})
                speaker = who
                k += 1
            elif t in noise_slots:
                turns.append({"speaker": speaker, "dia_id": dia, "text": rng.choice(noise)})
            else:
                turns.append({"speaker": speaker, "dia_id": dia, "text": rng.choice(FILLER)})
            speaker = b if speaker == a else a
        conversation[f"session_{s}_date_time"] = f"{rng.randint(1, 11)}:{rng.choice(['05', '20', '45'])} pm on {2 + 4 * s} May, 2023"
        conversation[f"session_{s}"] = turns
    qa = [
        {"question": q, "answer": ans, "evidence": [fact_ids[k] for k in keys], "category": cat}
        for q, ans, keys, cat in questions
    ]
    return {"sample_id": f"synthetic-{a.lower()}-{b.lower()}", "conversation": conversation, "qa": qa}

def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "data/locomo-synthetic.json"
    data = [sample(a, b, seed) for a, b, seed in SAMPLES]
    with open(out, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
        f.write("\n")
    n_turns = sum(len(v) for s in data for k, v in s["conversation"].items() if k.startswith("session_") and not k.endswith("date_time"))
    print(f"wrote {out}: {len(data)} samples, {n_turns} turns, {sum(len(s['qa']) for s in data)} questions")

if __name__ == "__main__":
    main()
