#!/usr/bin/env python3
"""Offline exploration of fusion and scoring on a signal dump written by
`cargo bench -p agon-memory --bench recall -- --dataset FILE --dump OUT`.

Re-implements the harness's metrics (recall@5, recall@10, recall within a
token budget, per LoCoMo category) over BM25 computed from the dumped terms
and the dumped cosines, so many variants can be compared in seconds. The
numbers of the variant finally chosen are confirmed by the Rust harness.

usage: explore_retrieval.py DUMP [VARIANT ...]   (no variant: all)
"""
import json
import math
import sys
from collections import Counter, defaultdict

BUDGET = 1000


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


class Bm25:
    def __init__(self, docs, k1=1.2, b=0.75):
        self.k1, self.b = k1, b
        self.n = len(docs)
        self.len = [len(d) for d in docs]
        self.avg = max(1.0, sum(self.len) / max(1, self.n))
        self.tf = [Counter(d) for d in docs]
        df = Counter()
        for d in docs:
            df.update(set(d))
        self.idf = {t: math.log(1 + (self.n - c + 0.5) / (c + 0.5)) for t, c in df.items()}

    def scores(self, terms, skip=()):
        out = [0.0] * self.n
        for t in set(terms):
            if t not in self.idf or t in skip:
                continue
            idf = self.idf[t]
            for i, tf in enumerate(self.tf):
                f = tf.get(t)
                if f:
                    out[i] += idf * f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * self.len[i] / self.avg))
        return out


def top(values, n):
    return sorted(range(len(values)), key=lambda i: (-values[i], i))[:n]


def minmax(values):
    lo, hi = min(values), max(values)
    if hi - lo <= 1e-12:
        return [0.5] * len(values)
    return [(v - lo) / (hi - lo) for v in values]


def evaluate(dump, rank, name, expand=0):
    """`rank(sample_ctx, q)` returns turn indices best first."""
    per_cat = defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for sample in dump:
        ctx = prepare(sample)
        ids = [t["id"] for t in sample["turns"]]
        tokens = [t["tokens"] for t in sample["turns"]]
        for q in sample["questions"]:
            gold = set(q["evidence"])
            if not gold:
                continue
            order = rank(ctx, q)
            r = lambda k: sum(1 for i in order[:k] if ids[i] in gold) / len(gold)
            used, hit, seen = 0, 0, set()
            stream = []
            for i in order:
                stream.append(i)
                for d in range(1, expand + 1):
                    stream.extend(j for j in (i - d, i + d) if 0 <= j < len(ids))
            for i in stream:
                if i in seen:
                    continue
                seen.add(i)
                used += tokens[i]
                if used > BUDGET:
                    break
                hit += ids[i] in gold
            for key in (q["category"], "all"):
                c = per_cat[key]
                c[0] += 1
                c[1] += r(5)
                c[2] += r(10)
                c[3] += hit / len(gold)
    row = f"{name:<34}"
    for key in (1, 2, 3, 4, 5, "all"):
        n, a, b, d = per_cat[key]
        if n:
            row += f"  {key}:{b / n:.3f}/{d / n:.3f}"
    n, a, b, d = per_cat["all"]
    row += f"   r5 {a / n:.3f}"
    print(row, flush=True)
    return b / n


_cache = {}


def prepare(sample):
    key = sample["sample"]
    if key not in _cache:
        docs = [t["terms"] for t in sample["turns"]]
        speakers = {t["speaker"].lower() for t in sample["turns"]}
        bare = [t["terms"][1:] if t["terms"] and t["terms"][0] == t["speaker"].lower() else t["terms"]
                for t in sample["turns"]]
        _cache[key] = dict(sample=sample, docs=docs, bare=bare, speakers=speakers, bm25={},
                           who=[t["speaker"].lower() for t in sample["turns"]],
                           times=[t["time"] for t in sample["turns"]])
    return _cache[key]


def bm25_of(ctx, k1, b, docs="docs"):
    if (k1, b, docs) not in ctx["bm25"]:
        ctx["bm25"][(k1, b, docs)] = Bm25(ctx[docs], k1, b)
    return ctx["bm25"][(k1, b, docs)]


def fused(ctx, q, share=0.35, k1=1.2, b=0.75, cos_key="cos", lex_norm="minmax", cos_norm="minmax",
          candidates=100, recency_w=0.0, half_life_days=None, rank_decay=None, rel_w=3.0, skip_names=False,
          docs="docs", speaker_w=0.0, feedback=None):
    bm = bm25_of(ctx, k1, b, docs)
    skip = ctx["speakers"] if skip_names else ()
    lex = bm.scores(q["terms"], skip)
    if feedback:
        # pseudo-relevance feedback: (terms, weight) from a first pass
        terms, weight = feedback
        extra = bm.scores(terms, skip)
        lex = [a + weight * e for a, e in zip(lex, extra)]
    cos = q[cos_key]
    dense_top = top(cos, candidates)
    lex_top = [i for i in top(lex, candidates) if lex[i] > 0]
    rrf = defaultdict(float)
    for lst in (dense_top, lex_top):
        for r, i in enumerate(lst):
            rrf[i] += 1 / (60 + r + 1)
    cands = sorted(rrf, key=lambda i: (-rrf[i], i))[:candidates]
    lv = [lex[i] for i in cands]
    cv = [cos[i] for i in cands]
    if lex_norm == "minmax":
        ln = [0.0] * len(lv) if all(v == 0 for v in lv) else minmax(lv)
    else:  # max
        m = max(lv) or 1.0
        ln = [v / m for v in lv]
    cn = minmax(cv) if cos_norm == "minmax" else cv
    rel = minmax([(1 - share) * c + share * l for c, l in zip(cn, ln)])
    score = [rel_w * r for r in rel]
    if speaker_w:
        named = {n for n in ctx["speakers"] if n in q["terms"]}
        score = [x + speaker_w * (ctx["who"][i] in named) for x, i in zip(score, cands)]
    if recency_w:
        times = [ctx["times"][i] for i in cands]
        if half_life_days:
            newest = max(times)
            rec = [0.5 ** ((newest - t) / 86400 / half_life_days) for t in times]
        else:
            order = sorted(range(len(cands)), key=lambda j: (-times[j], j))
            raw = [0.0] * len(cands)
            for rank, j in enumerate(order):
                raw[j] = rank_decay ** rank
            rec = minmax(raw)
        score = [s + recency_w * r for s, r in zip(score, rec)]
    # importance is constant in the harness: min-max gives 0.5 to all
    return [cands[j] for j in sorted(range(len(cands)), key=lambda j: (-score[j], -ctx["times"][cands[j]]))]


VARIANTS = {
    "bm25": lambda c, q: [i for i in top(bm25_of(c, 1.2, 0.75).scores(q["terms"]), 50)],
    "dense": lambda c, q: top(q["cos"], 50),
    "dense_bare": lambda c, q: top(q["cos_bare"], 50),
    "fusion(today)": lambda c, q: fused(c, q),
    "agon(today)": lambda c, q: fused(c, q, recency_w=0.5, rank_decay=0.99),
}
for share in (0.5, 0.6, 0.7, 0.8):
    VARIANTS[f"fusion share {share}"] = (lambda s: lambda c, q: fused(c, q, share=s))(share)
    VARIANTS[f"fusion share {share} bare"] = (lambda s: lambda c, q: fused(c, q, share=s, cos_key="cos_bare"))(share)
    VARIANTS[f"fusion share {share} lexmax"] = (lambda s: lambda c, q: fused(c, q, share=s, lex_norm="max"))(share)
for k1, b in ((0.9, 0.4), (1.2, 0.5), (1.5, 0.75), (0.9, 0.75), (2.0, 0.75)):
    VARIANTS[f"bm25 k1={k1} b={b}"] = (lambda k1, b: lambda c, q: top(bm25_of(c, k1, b).scores(q["terms"]), 50))(k1, b)
VARIANTS["bm25 no names"] = lambda c, q: top(bm25_of(c, 1.2, 0.75).scores(q["terms"], c["speakers"]), 50)
for hl in (7, 30, 90):
    VARIANTS[f"fusion 0.6 + rec 0.5 hl {hl}d"] = (lambda hl: lambda c, q: fused(c, q, share=0.6, recency_w=0.5, half_life_days=hl))(hl)


for share in (0.2, 0.3, 0.4, 0.5):
    for key in ("cos_bare", "cos_nameless"):
        VARIANTS[f"f {share} {key} lexmax"] = (lambda s, k: lambda c, q: fused(c, q, share=s, cos_key=k, lex_norm="max"))(share, key)
        VARIANTS[f"f {share} {key} lexmax nonames"] = (lambda s, k: lambda c, q: fused(c, q, share=s, cos_key=k, lex_norm="max", skip_names=True))(share, key)
VARIANTS["dense_nameless"] = lambda c, q: top(q["cos_nameless"], 50)
VARIANTS["bm25 bare nonames"] = lambda c, q: top(bm25_of(c, 1.2, 0.75, "bare").scores(q["terms"], c["speakers"]), 50)
VARIANTS["bm25 bare"] = lambda c, q: top(bm25_of(c, 1.2, 0.75, "bare").scores(q["terms"]), 50)
for share in (0.1, 0.2, 0.3, 0.4, 0.5):
    for norm in ("max", "minmax"):
        VARIANTS[f"N {share} {norm}"] = (lambda s, n: lambda c, q: fused(c, q, share=s, cos_key="cos_nameless", lex_norm=n, docs="bare", skip_names=True))(share, norm)
        VARIANTS[f"N {share} {norm} names"] = (lambda s, n: lambda c, q: fused(c, q, share=s, cos_key="cos_nameless", lex_norm=n, docs="bare"))(share, norm)
for w in (0.1, 0.25, 0.5):
    VARIANTS[f"N 0.3 max spk {w}"] = (lambda w: lambda c, q: fused(c, q, share=0.3, cos_key="cos_nameless", lex_norm="max", docs="bare", skip_names=True, speaker_w=w))(w)


# The steps from today's default to the new one, each on top of the last.
STEPS = {
    "s0 agon before (rank recency)": lambda c, q: fused(c, q, recency_w=0.5, rank_decay=0.99),
    "s1 + recency by time (1 week)": lambda c, q: fused(c, q, recency_w=0.5, half_life_days=7),
    "s2 + names as a field": lambda c, q: fused(c, q, recency_w=0.5, half_life_days=7, cos_key="cos_nameless",
                                               docs="bare", skip_names=True),
    "s3 + lexical share 0.3": lambda c, q: fused(c, q, share=0.3, recency_w=0.5, half_life_days=7,
                                                cos_key="cos_nameless", docs="bare", skip_names=True),
    "s4 + speaker 0.25": lambda c, q: fused(c, q, share=0.3, recency_w=0.5, half_life_days=7, cos_key="cos_nameless",
                                            docs="bare", skip_names=True, speaker_w=0.25),
    "s4 without recency": lambda c, q: fused(c, q, share=0.3, cos_key="cos_nameless",
                                             docs="bare", skip_names=True, speaker_w=0.25),
    "s4 recency 1 day": lambda c, q: fused(c, q, share=0.3, recency_w=0.5, half_life_days=1, cos_key="cos_nameless",
                                           docs="bare", skip_names=True, speaker_w=0.25),
}
VARIANTS.update(STEPS)

TODAY = dict(share=0.3, recency_w=0.5, half_life_days=7, cos_key="cos_nameless", docs="bare",
             skip_names=True, speaker_w=0.25)


def feedback_terms(ctx, q, first, hits, n_terms):
    """The `n_terms` terms of the first pass's `hits` best turns with the
    highest tf·idf, leaving out the question's own terms and the names."""
    bm = bm25_of(ctx, 1.2, 0.75, "bare")
    weight = Counter()
    for i in first[:hits]:
        for t, f in Counter(ctx["bare"][i]).items():
            if t in ctx["speakers"] or t in q["terms"]:
                continue
            weight[t] += f * bm.idf.get(t, 0.0)
    return [t for t, _ in weight.most_common(n_terms)]


def prf(ctx, q, hits=3, n_terms=8, w=0.5, only_multi=False):
    first = fused(ctx, q, **TODAY)
    if only_multi and q["category"] != 1:
        return first
    terms = feedback_terms(ctx, q, first, hits, n_terms)
    return fused(ctx, q, feedback=(terms, w), **TODAY)


VARIANTS["today"] = lambda c, q: fused(c, q, **TODAY)
for hits in (2, 3, 5):
    for n_terms in (5, 10):
        for w in (0.3, 0.6, 1.0):
            VARIANTS[f"prf h{hits} t{n_terms} w{w}"] = (
                lambda h, t, w: lambda c, q: prf(c, q, h, t, w))(hits, n_terms, w)


def vectors(ctx):
    """The turns' vectors (without the speaker), as a matrix."""
    if "V" not in ctx:
        import numpy as np
        ctx["V"] = np.array([t["vector"] for t in ctx["sample"]["turns"]], dtype=np.float32)
    return ctx["V"]


def dense_prf(ctx, q, hits=3, alpha=0.5, only_multi=False, blend=None):
    """Dense pseudo-relevance feedback (Rocchio): a second pass whose query
    vector is the nameless question's plus `alpha` times the centroid of
    the first pass's `hits` best turns. `blend`: the second pass's cosine
    mixed with the first's at that weight instead of replacing it."""
    import numpy as np
    first = fused(ctx, q, **TODAY)
    if only_multi and q["category"] != 1:
        return first
    V = vectors(ctx)
    qv = np.array(q["vector_nameless"], dtype=np.float32)
    q2 = qv + alpha * V[first[:hits]].mean(axis=0)
    q2 /= np.linalg.norm(q2)
    cos2 = V @ q2
    if blend is not None:
        cos2 = (1 - blend) * np.array(q["cos_nameless"], dtype=np.float32) + blend * cos2
    second = dict(q)
    second["cos_prf"] = cos2.tolist()
    return fused(ctx, second, **{**TODAY, "cos_key": "cos_prf"})


for hits in (1, 2, 3, 5):
    for alpha in (0.3, 0.6, 1.0):
        VARIANTS[f"dprf h{hits} a{alpha}"] = (
            lambda h, a: lambda c, q: dense_prf(c, q, h, a))(hits, alpha)
for hits in (2, 3):
    for blend in (0.3, 0.5):
        VARIANTS[f"dprf h{hits} a1.0 blend{blend}"] = (
            lambda h, b: lambda c, q: dense_prf(c, q, h, 1.0, blend=b))(hits, blend)


def main():
    dump = load(sys.argv[1])
    names = sys.argv[2:] or list(VARIANTS)
    print(f"{'variant':<34}  category:recall@10/recall@{BUDGET}tok ...")
    for name in names:
        if name.startswith("expand"):
            # expandN:VARIANT — neighbours ±N of every hit fill the budget
            head, base = name.split(":", 1)
            evaluate(dump, VARIANTS[base], name, expand=int(head[len("expand"):]))
        else:
            evaluate(dump, VARIANTS[name], name)


if __name__ == "__main__":
    main()

