# Independent reference for real_cpu_bubble_test: per rank of a sample_traces/torch_cpu set, the
# comm_wait and empty time (ns) summed over its ProfilerStep iterations, worked out from the trace
# file alone with Python (no analyzer code), exact to the nanosecond (decimal timestamps):
# compute = union of the outermost non-c10d cpu_ops started in the step; communication = each
# outermost c10d:: op from its start to the end of the latest gloo:/nccl: range of the same
# thread starting inside it; the fill ends at the first compute, or, where the step's first
# c10d::send / c10d::recv_ is a receive, at the first compute that starts once that receive's
# communication ended (docs/bubble.md); stall = fill end to last compute minus compute;
# comm_wait = stall under communication, empty = the rest of the stall.   usage: torch_cpu_waits_reference.py SET_DIR
import gzip, json, sys, os
from decimal import Decimal
def ns(x): return int(Decimal(x) * 1000)
def union(ranges):
    out = []
    for s, e in sorted(ranges):
        if e <= s: continue
        if out and s <= out[-1][1]: out[-1][1] = max(out[-1][1], e)
        else: out.append([s, e])
    return out
def length(r): return sum(e - s for s, e in r)
def intersect(a, b):
    out = []; i = j = 0
    while i < len(a) and j < len(b):
        s = max(a[i][0], b[j][0]); e = min(a[i][1], b[j][1])
        if s < e: out.append([s, e])
        if a[i][1] < b[j][1]: i += 1
        else: j += 1
    return out
def subtract(a, b):
    return union([[s, e] for s, e in _sub(a, b)])
def _sub(a, b):
    for s, e in a:
        cur = s
        for bs, be in b:
            if be <= cur or bs >= e: continue
            if bs > cur: yield [cur, bs]
            cur = max(cur, be)
        if cur < e: yield [cur, e]
d = sys.argv[1]
for name in sorted(os.listdir(d)):
    if not name.endswith('.json.gz'): continue
    with gzip.open(os.path.join(d, name), 'rt') as f:
        doc = json.load(f, parse_float=Decimal)
    ev = [e for e in doc['traceEvents'] if e.get('ph') == 'X']
    ops = [(ns(e['ts']), ns(e['ts']) + ns(e['dur']), e['name']) for e in ev if e.get('cat') == 'cpu_op']
    # Only the model thread's ranges (the thread of the c10d ops; gloo's worker threads record
    # ranges of their own, in which the model thread does not wait).
    model = {e['tid'] for e in ev if e.get('cat') == 'cpu_op' and e['name'].startswith('c10d::')}
    gloo = [(ns(e['ts']), ns(e['ts']) + ns(e['dur'])) for e in ev if e.get('cat') == 'user_annotation' and e.get('tid') in model and (e['name'].startswith('gloo:') or e['name'].startswith('nccl:'))]
    steps = sorted((ns(e['ts']), e['name']) for e in ev if e['name'].startswith('ProfilerStep#'))
    ops.sort(key=lambda o: (o[0], -(o[1] - o[0])))
    top = []; furthest = None
    for o in ops:
        if top and o[1] <= furthest: continue
        furthest = o[1] if not top else max(furthest, o[1])
        top.append(o)
    cw = em = 0
    for k, (start, _) in enumerate(steps):
        nxt = steps[k + 1][0] if k + 1 < len(steps) else float('inf')
        mine = [o for o in top if start <= o[0] < nxt]
        comp = union([[s, e] for s, e, n in mine if not n.startswith('c10d::')])
        comm = []
        for s, e, n in mine:
            if not n.startswith('c10d::'): continue
            end = max([e] + [ge for gs, ge in gloo if s <= gs <= e])
            comm.append([s, end])
        transfers = [(s, e, n) for s, e, n in mine if n in ('c10d::send', 'c10d::recv_')]
        fill_end = comp[0][0]
        if transfers and transfers[0][2] == 'c10d::recv_':
            received = max([transfers[0][1]] + [ge for gs, ge in gloo
                                                 if transfers[0][0] <= gs <= transfers[0][1]])
            after = [s for s, e, n in mine if not n.startswith('c10d::') and s >= received]
            if after:
                fill_end = max(fill_end, min(after))
        comm = union(comm)
        stall = subtract([[fill_end, comp[-1][1]]], comp)
        w = length(intersect(stall, comm))
        cw += w; em += length(stall) - w
    print(doc['distributedInfo']['rank'], cw, em)
