#!/usr/bin/env python3
"""Writes data/locomo-dev.json: Agon's retrieval development set, a
LoCoMo-format dataset (same JSON layout as the real one) large and hard
enough to tune retrieval on: 10 two-person conversations, ~20 sessions each
over most of a year, ~6,000 turns and ~650 questions with evidence.

What makes it hard, modelled on how long chat conversations look:
- every event is an *episode* of several turns: an opener by the listener,
  the speaker's main turn (with a relative time: "last Friday", "two weeks
  ago"), the listener's reaction that repeats the topic words (a lexical
  distractor that is never evidence), a detail turn that often does not
  repeat the topic words (evidence for detail questions), and a reply;
- chit-chat filler composed from many sentence parts, and filler that
  mentions a topic's words without holding any fact;
- both speakers have events of the same kinds (races, trips, pets, classes),
  so names decide the answer and adversarial questions (category 5, asked
  about the wrong speaker) have distractors sharing every content word;
- topics come back across sessions (category 1 multi-hop questions join 2-3
  episodes), temporal questions (category 2) ask when, or which came first;
- category 3 (open-domain) questions are inferences phrased without the
  evidence's words; category 4 (single-hop) share some of them;
- some turns share a photo (`img_url`, `blip_caption`), and a few questions
  are answerable only from the caption.

Categories as in LoCoMo: 1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop, 5 adversarial. Deterministic (seeded).
"""
import datetime
import json
import random
import sys

PAIRS = [
    ("Caroline", "Melanie"), ("Jon", "Gina"), ("Priya", "Tomas"), ("Audrey", "Andrew"),
    ("Nate", "Joanna"), ("Evan", "Sam"), ("Calvin", "Dave"), ("Maria", "John"),
    ("Tim", "Deborah"), ("Jolene", "Rashid"),
]

# Relative times; a "when" question's answer is the date it names by the
# calendar (`event_date`).
TIME_REFS = [
    "yesterday", "last weekend", "last Friday", "two weeks ago",
    "this morning", "last month", "a few days ago", "last Sunday",
]

# Each kind of episode: slot pools, then the texts. `{t}` is the relative
# time, `{o}` the other speaker, `{s}` the speaker. Questions: (template,
# answer, evidence parts, category); parts are "main", "detail".
KINDS = {
    "race": dict(
        group="sport",
        slots=dict(race=["5K charity run", "half marathon", "trail race", "10K fun run", "duathlon"],
                   cause=["the children's hospital", "a local animal shelter", "cancer research",
                          "the food bank", "mental health awareness"],
                   feel=["my legs are still sore", "I nearly gave up at the hill", "I beat my own time"]),
        opener=["How was your weekend, {s}? Anything exciting?", "You look tired, {s}, busy week?"],
        main="I ran a {race} {t}, {feel}!",
        reaction=["A {race}? That's amazing, {s}! I could never run that far.",
                  "Wow, running a {race} takes real dedication."],
        detail="Thanks! All the money we raised went to {cause}, which made every step worth it.",
        questions=[("What kind of race did {s} run?", "{race}", ["main"], 4),
                   ("Which cause did the money from {s}'s race support?", "{cause}", ["detail"], 4),
                   ("When did {s} run the {race}?", "{date}", ["main"], 2)],
        adversarial=("What race did {o} run?", ["main"]),
        inference=("Does {s} care about giving back to the community?", "yes, raised money for {cause}", ["detail"]),
    ),
    "trip": dict(
        group="travel",
        slots=dict(place=["Lisbon", "the Scottish Highlands", "Kyoto", "Yosemite", "the Amalfi coast",
                          "Iceland", "Vancouver Island", "the Dolomites"],
                   thing=["a cable car up the mountain", "a food tour in the old town",
                          "whale watching", "a boat to a tiny island", "a night hike with headlamps"],
                   who=["partner", "two kids", "college roommate", "mom"]),
        opener=["Hey {s}! I haven't heard from you in a while, where have you been?",
                "Long time no talk, {s}! What's new?"],
        main="I just got back from a trip to {place} with my {who}, we left {t}.",
        reaction=["{place}! I've always wanted to go there. Was it as beautiful as the pictures?",
                  "Oh wow, a trip to {place} sounds like a dream."],
        detail="It was even better. The highlight was {thing}, none of us will forget it.",
        questions=[("Where did {s} travel with their {who}?", "{place}", ["main"], 4),
                   ("What was the highlight of {s}'s trip to {place}?", "{thing}", ["detail"], 4),
                   ("When did {s} leave for {place}?", "{date}", ["main"], 2)],
        adversarial=("Where did {o} go on vacation with their {who}?", ["main"]),
        inference=("Does {s} enjoy exploring new countries and cultures?", "yes", ["main"]),
    ),
    "pet": dict(
        group="pets",
        slots=dict(animal=["golden retriever puppy", "rescue greyhound", "tabby kitten", "pair of guinea pigs",
                           "bearded dragon", "border collie"],
                   name=["Max", "Luna", "Pepper", "Biscuit", "Oliver", "Juniper", "Mochi", "Ziggy"],
                   habit=["steals socks from the laundry basket", "sleeps on my keyboard",
                          "howls whenever the doorbell rings", "refuses to walk in the rain"]),
        opener=["Any news on your side, {s}?", "How's the house, {s}? Still quiet?"],
        main="Not quiet anymore, we adopted a {animal} {t} and named it {name}.",
        reaction=["A {animal}! {name} is such a cute name. You'll have your hands full.",
                  "Adopting is the best, {s}. Send me pictures of {name}!"],
        detail="Ha, we already do. It {habit}, but we love it to bits.",
        image=("a photo of a {animal} lying on a rug", "main"),
        questions=[("What is the name of the pet {s} adopted?", "{name}", ["main"], 4),
                   ("What funny habit does {s}'s {animal} have?", "{habit}", ["detail"], 4),
                   ("When did {s} adopt {name}?", "{date}", ["main"], 2)],
        adversarial=("What did {o} name the {animal}?", ["main"]),
        inference=("Would {s} be considered an animal lover?", "yes", ["main"]),
    ),
    "class": dict(
        group="hobby",
        slots=dict(craft=["pottery", "watercolor", "woodworking", "salsa dancing", "improv comedy",
                          "bouldering", "sourdough baking"],
                   teacher=["Ines", "Mateo", "Freya", "Haruki", "Bongani", "Sofia"],
                   day=["Tuesday nights", "Saturday mornings", "Thursday evenings"]),
        opener=["So, {s}, did you ever find something fun to do after work?",
                "You mentioned you were bored lately, {s}, any luck?"],
        main="Yes! I signed up for a {craft} class {t}, it meets on {day}.",
        reaction=["{craft}, really? That's such a fun way to unwind.",
                  "I tried {craft} once and was terrible at it, good for you!"],
        detail="The teacher, {teacher}, is so patient with beginners like me.",
        questions=[("What class did {s} sign up for?", "{craft}", ["main"], 4),
                   ("Who teaches the class {s} goes to?", "{teacher}", ["detail"], 4),
                   ("When does {s}'s {craft} class meet?", "{day}", ["main"], 2)],
        adversarial=("What class did {o} join on {day}?", ["main"]),
        inference=("Is {s} looking for creative outlets outside work?", "yes", ["main"]),
    ),
    "creation": dict(
        group="hobby",
        slots=dict(work=["a watercolor painting of a lighthouse at sunset", "a blue ceramic vase",
                         "a walnut cutting board", "a knitted scarf with stripes", "a clay mug with a fox on it"],
                   gift=["my grandmother", "my neighbour", "my best friend", "my sister"]),
        opener=["What have you been working on lately, {s}?", "Made anything new, {s}?"],
        main="Look what I finished {t}!",
        reaction=["That is gorgeous, {s}. You're so talented!",
                  "No way you made that yourself, it looks professional."],
        detail="Thank you! I'm giving it to {gift} for her birthday.",
        image=("a photo of {work}", "main"),
        questions=[("What did {s} make and share a photo of?", "{work}", ["main"], 4),
                   ("Who is {s} giving the handmade gift to?", "{gift}", ["detail", "main"], 1)],
        adversarial=("What did {o} make for {gift}?", ["main", "detail"]),
    ),
    "job": dict(
        group="work",
        slots=dict(place=["a veterinary clinic", "the public library", "a bike repair shop", "a small bakery",
                          "a design studio", "the city hospital", "a climbing gym"],
                   task=["night shifts", "archive digitization", "wheel building", "early bread runs",
                         "logo work for nonprofits", "patient intake"],
                   reason=["the old office was toxic", "I wanted to work closer to home",
                           "the pay is much better", "I needed something more meaningful"]),
        opener=["How's work treating you, {s}?", "Still at the same place, {s}?"],
        main="Actually, I started a new job at {place} {t}.",
        reaction=["A new job at {place}! Congratulations, that's a big change.",
                  "Good for you, changing jobs is scary but worth it."],
        detail="Honestly {reason}. For now I'm doing {task} while I learn the ropes.",
        questions=[("Where did {s} start a new job?", "{place}", ["main"], 4),
                   ("Why did {s} change jobs?", "{reason}", ["detail"], 4),
                   ("What is {s} doing at first in the new position?", "{task}", ["detail"], 4),
                   ("When did {s} start working at {place}?", "{date}", ["main"], 2)],
        adversarial=("Where did {o} get a new job?", ["main"]),
        inference=("Was {s} unhappy with the previous job?", "yes, {reason}", ["detail"]),
    ),
    "family": dict(
        group="family",
        slots=dict(rel=["sister", "brother", "cousin", "dad", "aunt"],
                   name=["Lena", "Marek", "Odile", "Ravi", "Tess", "Bruno"],
                   city=["Porto", "Tallinn", "Ghent", "Bergen", "Lyon", "Krakow", "Bologna", "Leiden"],
                   why=["a job at the university", "to be near the sea", "to open a cafe", "to study architecture"]),
        opener=["How's the family, {s}?", "Did you hear anything from your relatives, {s}?"],
        main="Big news, my {rel} {name} moved to {city} {t}.",
        reaction=["{city}! That's far. Will you miss {name}?", "Oh, moving to {city}, what a change!"],
        detail="I will, but {name} went for {why}, so it's the right call.",
        questions=[("Where did {s}'s {rel} move to?", "{city}", ["main"], 4),
                   ("Why did {name} move away?", "{why}", ["detail"], 4),
                   ("When did {s}'s {rel} move to {city}?", "{date}", ["main"], 2)],
        adversarial=("Where did {o}'s {rel} {name} move?", ["main"]),
        inference=("Does {s} now have a reason to visit {city}?", "yes, {rel} {name} lives there", ["main"]),
    ),
    "book": dict(
        group="media",
        slots=dict(title=["The Overstory", "Piranesi", "Klara and the Sun", "The Dispossessed",
                          "Circe", "Project Hail Mary", "Educated"],
                   feeling=["cried at the ending", "stayed up until 3 am to finish it",
                            "couldn't stop thinking about it"],
                   lesson=["kindness is a choice you make every day", "nature keeps its own time",
                           "it's never too late to start over"]),
        opener=["Read anything good lately, {s}?", "What's on your nightstand these days, {s}?"],
        main="I finished {title} {t} and I {feeling}.",
        reaction=["{title} has been on my list forever! Was it good?", "Everyone keeps recommending {title}."],
        detail="It really was. What stuck with me is that {lesson}.",
        questions=[("Which book did {s} finish recently?", "{title}", ["main"], 4),
                   ("What lesson did {s} take from {title}?", "{lesson}", ["detail"], 4)],
        adversarial=("Which novel did {o} finish reading?", ["main"]),
        inference=("Does {s} like reading fiction?", "yes", ["main"]),
    ),
    "concert": dict(
        group="music",
        slots=dict(band=["a jazz quartet", "an indie folk band", "the city orchestra", "a reggae band",
                         "a string trio"],
                   venue=["the old theatre", "a rooftop bar", "the park bandstand", "a tiny basement club"],
                   song=["an acoustic cover of a Beatles song", "a fifteen-minute drum solo",
                         "a song about the ocean"]),
        opener=["Did you do anything fun {t2}, {s}?", "What did you get up to, {s}?"],
        main="I went to see {band} at {venue} {t}.",
        reaction=["Live music at {venue}, so jealous!", "{band}? I didn't know you liked that kind of music."],
        detail="The best part was {song}, the whole crowd went quiet.",
        questions=[("Who did {s} see perform at {venue}?", "{band}", ["main"], 4),
                   ("What was the best part of the show {s} attended?", "{song}", ["detail"], 4),
                   ("When did {s} go to the concert at {venue}?", "{date}", ["main"], 2)],
        adversarial=("Where did {o} see {band}?", ["main"]),
        inference=("Does {s} enjoy live music?", "yes", ["main"]),
    ),
    "health": dict(
        group="health",
        slots=dict(injury=["sprained my ankle", "pulled a muscle in my back", "broke my wrist",
                           "got a nasty concussion"],
                   how=["slipping on wet stairs", "lifting a heavy box", "falling off my bike"],
                   rest=["six weeks", "ten days", "a month"]),
        opener=["You've been quiet, {s}, is everything okay?", "How are you feeling, {s}?"],
        main="Not great, I {injury} {t}.",
        reaction=["Oh no, {s}! I'm so sorry, that sounds painful.", "Ouch. Take care of yourself, please."],
        detail="It happened {how}. The doctor said I need {rest} of rest.",
        questions=[("What injury did {s} have?", "{injury}", ["main"], 4),
                   ("How did {s} get hurt?", "{how}", ["detail"], 4),
                   ("How long does {s} need to rest after the injury?", "{rest}", ["detail"], 4),
                   ("When did {s} get injured?", "{date}", ["main"], 2)],
        adversarial=("How did {o} get injured?", ["detail"]),
    ),
    "volunteer": dict(
        group="community",
        slots=dict(org=["a youth mentoring program", "the community garden", "a homeless shelter kitchen",
                        "an LGBTQ support group", "a literacy program for adults"],
                   moment=["a teenager told me I helped her apply to college",
                           "we harvested forty pounds of tomatoes",
                           "a man I'd been helping read his first book aloud"]),
        opener=["What have you been up to lately, {s}?", "How do you spend your free time these days, {s}?"],
        main="I've been volunteering with {org}, I went to my first session {t}.",
        reaction=["Volunteering with {org} is so meaningful, {s}.", "That's wonderful, they must need the help."],
        detail="The best moment so far: {moment}.",
        questions=[("Where does {s} volunteer?", "{org}", ["main"], 4),
                   ("What was the most rewarding moment of {s}'s volunteering?", "{moment}", ["detail"], 4),
                   ("When did {s} go to the first volunteering session?", "{date}", ["main"], 2)],
        adversarial=("Which group does {o} volunteer with?", ["main"]),
        inference=("Is {s} someone who gives time to others?", "yes", ["main"]),
    ),
    "car": dict(
        group="purchases",
        slots=dict(car=["a secondhand Corolla", "an electric Zoe", "a rusty Volvo estate", "a tiny Fiat Panda",
                        "a camper van"],
                   why=["so I don't have to bike in the rain", "for weekend trips to the mountains",
                        "because the bus route was cancelled"]),
        opener=["How's the commute, {s}?", "Still biking everywhere, {s}?"],
        main="Not anymore, we bought {car} {t}.",
        reaction=["{car}! Very practical.", "Nice, a car changes everything."],
        detail="We mostly got it {why}.",
        questions=[("What vehicle did {s} buy?", "{car}", ["main"], 4),
                   ("Why did {s} buy a car?", "{why}", ["detail"], 4)],
        adversarial=("What car did {o} buy?", ["main"]),
    ),
    "food": dict(
        group="food",
        slots=dict(dish=["a spicy lentil curry", "homemade ramen", "a lemon tart", "stuffed peppers",
                         "a mushroom risotto"],
                   source=["my grandmother's recipe", "a cooking show", "a street vendor in Mexico City"]),
        opener=["What's for dinner tonight, {s}?", "Cooked anything nice, {s}?"],
        main="I made {dish} {t} and it turned out great.",
        reaction=["{dish} sounds delicious! Save me some.", "You're a better cook than me, {s}."],
        detail="I learned it from {source}.",
        image=("a photo of {dish} on a plate", "main"),
        questions=[("What dish did {s} cook?", "{dish}", ["main"], 4),
                   ("Where did {s} learn the recipe from?", "{source}", ["detail"], 4)],
        adversarial=("What did {o} cook for dinner?", ["main"]),
        inference=("Does {s} enjoy cooking at home?", "yes", ["main"]),
    ),
}

# Slots that read as a topic in "someone at work was talking about X".
TOPIC_SLOTS = [("race", "race"), ("trip", "place"), ("pet", "animal"), ("class", "craft"),
               ("book", "title"), ("concert", "band"), ("volunteer", "org"), ("car", "car"),
               ("food", "dish"), ("family", "city"), ("job", "place")]

GROUP_QUESTIONS = {
    "sport": "What races has {s} taken part in?",
    "travel": "Which places has {s} traveled to?",
    "pets": "What pets does {s} have?",
    "hobby": "What creative hobbies has {s} pursued?",
    "work": "Which jobs has {s} had during the year?",
    "family": "Which of {s}'s relatives moved away, and where?",
    "media": "Which books has {s} read this year?",
    "music": "Which performers has {s} seen live?",
    "health": "What injuries has {s} had?",
    "community": "Which organizations has {s} volunteered with?",
    "food": "What dishes has {s} cooked?",
    "purchases": "What vehicles has {s} bought?",
}

OPEN = ["Hey", "Hi", "Oh", "Honestly,", "Ugh,", "Haha,", "Well,", "You know,", "Yeah,", "So"]
BODY = [
    "this week has been so long", "the weather keeps changing every hour",
    "I've been trying to sleep earlier", "we ordered takeaway again", "work is busy but manageable",
    "I finally cleaned out the garage", "my phone screen cracked again", "traffic was awful this morning",
    "I've been listening to a podcast about ancient Rome", "the kids have a school play soon",
    "I keep forgetting to call the plumber", "the neighbours are renovating again",
    "I bought new shoes, my old ones fell apart", "I've been drinking way too much coffee",
    "we watched a documentary about octopuses", "I'm thinking about repainting the kitchen",
    "my laptop is painfully slow", "the new cafe downtown makes great cinnamon buns",
    "I spent the whole evening answering emails", "we rearranged the living room furniture",
    "my inbox is a disaster", "I can't believe how fast this year is going",
    "the power went out for two hours", "I started a new series and can't stop watching",
]
CLOSE = [
    "How about you?", "Anyway, how are things with you?", "What's new on your end?",
    "I hope you're doing well.", "Talk soon!", "It's good to chat with you.", "Same old, same old.",
    "Let's catch up properly soon.", "Fingers crossed it gets better.", "Can't complain, really.",
]
REPLY = [
    "That's wonderful, I'm really happy for you!", "Oh no, I hope it gets better soon.",
    "Haha, I know exactly what you mean.", "Same here, honestly.", "That sounds lovely.",
    "Wow, I had no idea!", "You deserve a break, seriously.", "I'm always here if you need to talk.",
    "That made me smile, thanks for sharing.", "Keep me posted, okay?",
]


def fill(rng, kind_name):
    """Slot values for one episode."""
    kind = KINDS[kind_name]
    return {k: rng.choice(v) for k, v in kind["slots"].items()}


def fmt(template, values):
    return template.format(**values)


def filler(rng, topic_words=None):
    """A chit-chat turn; with `topic_words`, one that mentions a topic's words
    but states no fact."""
    if topic_words:
        return rng.choice([
            f"Random thought, but someone at work was talking about {topic_words} all day.",
            f"I saw an ad for {topic_words} and thought of you.",
            f"My cousin keeps posting about {topic_words}, it's getting a bit much.",
            f"Do you think {topic_words} is overrated? I can't decide.",
        ])
    first, second = rng.sample(BODY, 2)
    parts = [f"{rng.choice(OPEN)} {first}."]
    if rng.random() < 0.6:
        parts.append(f"Also {second}.")
    if rng.random() < 0.5:
        parts.append(rng.choice(CLOSE))
    return " ".join(parts)


def day_text(day):
    return f"{day.day} {day.strftime('%B %Y')}"


def latest_before(day, weekday):
    """The latest `weekday` (Monday 0) strictly before `day`."""
    back = (day.weekday() - weekday) % 7 or 7
    return day - datetime.timedelta(days=back)


def event_date(session_date, phrase):
    """The date a relative time names, by the calendar, as an annotator
    writes it (LoCoMo's answers resolve against the session's date)."""
    day = session_date.date()
    if phrase == "yesterday":
        return day_text(day - datetime.timedelta(days=1))
    if phrase == "this morning":
        return day_text(day)
    if phrase == "two weeks ago":
        return day_text(day - datetime.timedelta(days=14))
    if phrase == "last Friday":
        return day_text(latest_before(day, 4))
    if phrase == "last Sunday":
        return day_text(latest_before(day, 6))
    if phrase == "last weekend":
        return "the weekend of " + day_text(latest_before(day, 6) - datetime.timedelta(days=1))
    if phrase == "last month":
        return (day.replace(day=1) - datetime.timedelta(days=1)).strftime("%B %Y")
    if phrase == "a few days ago":
        return "a few days before " + day_text(day)
    raise ValueError(phrase)


def conversation(index, a, b):
    rng = random.Random(1000 + index)
    sessions = rng.randint(18, 22)
    start = datetime.datetime(2023, 1, 5, 14, 0) + datetime.timedelta(days=rng.randint(0, 40))
    dates = []
    day = start
    for _ in range(sessions):
        day = day + datetime.timedelta(days=rng.randint(7, 16), hours=rng.randint(-3, 3))
        dates.append(day)
    # Each speaker gets episodes of most kinds; some kinds twice, so multi-hop
    # questions join episodes from different sessions.
    # Speakers share some kinds of episode (so names decide) and not others
    # (so adversarial questions have no true answer); three kinds repeat.
    order = rng.sample(sorted(KINDS), len(KINDS))
    plan = []
    for who, kinds in ((a, order[:9]), (b, order[4:])):
        kinds = kinds + rng.sample(kinds, 3)
        for k in kinds:
            plan.append((who, k))
    rng.shuffle(plan)
    per_session = [[] for _ in range(sessions)]
    for i, item in enumerate(plan):
        per_session[i % sessions].append(item)

    conv = {"speaker_a": a, "speaker_b": b}
    qa = []
    history = {}  # (speaker, group) -> list of (episode values, evidence ids, kind)
    episode_order = []  # (speaker, kind, values, main id, date)
    adversarial = []  # (the wrong speaker, kind, question)
    used = {}  # (speaker, kind) -> slot values of earlier episodes
    for s in range(sessions):
        date = dates[s]
        turns = []

        def add(speaker, text, caption=None):
            dia = f"D{s + 1}:{len(turns) + 1}"
            turn = {"speaker": speaker, "dia_id": dia, "text": text}
            if caption:
                turn["img_url"] = [f"https://example.invalid/{dia.replace(':', '-')}.jpg"]
                turn["blip_caption"] = caption
            turns.append(turn)
            return dia

        first = a if s % 2 == 0 else b
        speaker = first
        for _ in range(rng.randint(4, 8)):
            add(speaker, filler(rng))
            speaker = b if speaker == a else a
        for who, kind_name in per_session[s]:
            other = b if who == a else a
            kind = KINDS[kind_name]
            values = fill(rng, kind_name)
            # A repeated episode differs from the earlier one in every slot.
            for earlier in used.get((who, kind_name), []):
                for slot, pool in kind["slots"].items():
                    if values[slot] == earlier[slot] and len(pool) > 1:
                        values[slot] = rng.choice([v for v in pool if v != earlier[slot]])
            used.setdefault((who, kind_name), []).append(dict(values))
            t = rng.choice(TIME_REFS)
            values.update(s=who, o=other, t=t, t2=rng.choice(["this weekend", "lately"]),
                          date=event_date(date, t))
            add(other, fmt(rng.choice(kind["opener"]), values))
            caption = None
            image = kind.get("image")
            if image and rng.random() < 0.5:
                caption = fmt(image[0], values)
            main_text = fmt(kind["main"], values)
            if caption and kind_name == "creation":
                main_text = main_text + " I've been working on it for weeks."
            main = add(who, main_text, caption)
            add(other, fmt(rng.choice(kind["reaction"]), values))
            detail = add(who, fmt(kind["detail"], values))
            add(other, rng.choice(REPLY))
            ids = {"main": main, "detail": detail}
            for q, ans, parts, cat in kind["questions"]:
                if kind_name == "creation" and not caption and "main" in parts and cat == 4:
                    continue  # without the photo nothing names the work
                evidence = [ids[p] for p in parts]
                qa.append({"question": fmt(q, values), "answer": fmt(ans, values),
                           "evidence": evidence, "category": cat})
                # LoCoMo's adversarial questions: a single-hop question with
                # the other speaker's name; the evidence is the true speaker's.
                if cat == 4 and rng.random() < 0.6:
                    wrong = dict(values, s=other)
                    adversarial.append((other, kind_name, {"question": fmt(q, wrong), "answer": "not mentioned",
                                                           "evidence": evidence, "category": 5}))
            if "adversarial" in kind and rng.random() < 0.9:
                q, parts = kind["adversarial"]
                adversarial.append((other, kind_name, {"question": fmt(q, values), "answer": "not mentioned",
                                                       "evidence": [ids[p] for p in parts], "category": 5}))
            if "inference" in kind and rng.random() < 0.3:
                q, ans, parts = kind["inference"]
                qa.append({"question": fmt(q, values), "answer": fmt(ans, values),
                           "evidence": [ids[p] for p in parts], "category": 3})
            history.setdefault((who, kind["group"]), []).append(
                (fmt(kind["questions"][0][1], values), main, kind_name))
            episode_order.append((who, kind_name, values, main, date))
            # Chat between episodes, some of it on a topic's words.
            for _ in range(rng.randint(2, 6)):
                topic = None
                if rng.random() < 0.2:
                    kind_name2, slot = rng.choice(TOPIC_SLOTS)
                    topic = rng.choice(KINDS[kind_name2]["slots"][slot])
                add(speaker, filler(rng, topic))
                speaker = b if speaker == a else a
        for _ in range(rng.randint(3, 7)):
            add(speaker, filler(rng))
            speaker = b if speaker == a else a
        hour = date.hour % 12 or 12
        conv[f"session_{s + 1}_date_time"] = (
            f"{hour}:{date.minute:02d} {'am' if date.hour < 12 else 'pm'} on {date.day} {date.strftime('%B')}, {date.year}")
        conv[f"session_{s + 1}"] = turns

    # Multi-hop: one question per speaker and group with two or more episodes.
    for (who, group), eps in sorted(history.items()):
        if len(eps) >= 2 and group in GROUP_QUESTIONS:
            qa.append({"question": GROUP_QUESTIONS[group].format(s=who), "answer": "; ".join(e[0] for e in eps),
                       "evidence": [e[1] for e in eps], "category": 1})
    # Temporal ordering: which of two of a speaker's episodes came first.
    for who in (a, b):
        own = [e for e in episode_order if e[0] == who and e[1] in ("trip", "job", "pet", "race", "class")]
        for x, y in zip(own[::2], own[1::2]):
            if x[1] == y[1]:
                continue
            name = {"trip": "the trip to {place}", "job": "the new job at {place}", "pet": "adopting {name}",
                    "race": "the {race}", "class": "the {craft} class"}
            qx, qy = fmt(name[x[1]], x[2]), fmt(name[y[1]], y[2])
            qa.append({"question": f"Which came first for {who}, {qx} or {qy}?", "answer": qx,
                       "evidence": [x[3], y[3]], "category": 2})
    # Adversarial questions only where the named speaker has no such episode
    # (otherwise the question has a true answer).
    had = {(e[0], e[1]) for e in episode_order}
    qa += [q for who, kind_name, q in adversarial if (who, kind_name) not in had]
    # The same question about two episodes (a kind repeated): one multi-hop
    # question with both.
    merged = {}
    for q in qa:
        if q["question"] in merged:
            m = merged[q["question"]]
            m["evidence"] = m["evidence"] + q["evidence"]
            m["answer"] = f"{m['answer']}; {q['answer']}"
            m["category"] = 1
        else:
            merged[q["question"]] = dict(q)
    qa = list(merged.values())
    rng.shuffle(qa)
    return {"sample_id": f"dev-{index + 1}-{a.lower()}-{b.lower()}", "conversation": conv, "qa": qa}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "data/locomo-dev.json"
    data = [conversation(i, a, b) for i, (a, b) in enumerate(PAIRS)]
    with open(out, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    turns = sum(len(v) for s in data for k, v in s["conversation"].items()
                if k.startswith("session_") and not k.endswith("date_time"))
    cats = {}
    for s in data:
        for q in s["qa"]:
            cats[q["category"]] = cats.get(q["category"], 0) + 1
    print(f"wrote {out}: {len(data)} samples, {turns} turns, "
          f"{sum(cats.values())} questions, by category {dict(sorted(cats.items()))}")


if __name__ == "__main__":
    main()
