#!/usr/bin/env python3
"""Trims public PyTorch profiler traces into the small test traces of this folder.

    python3 tests/data/traces/trim.py HTA_CHECKOUT   # a clone of facebookresearch/HolisticTraceAnalysis

Keeps every complete ("X") event and the metadata the importer reads (distributedInfo), drops
flow events (ph s/f, categories ac2g and fwdbwd) and the arguments ddpsim does not read
(shapes, occupancy, grid, ...), and rewrites the file gzip-compressed with a fixed mtime so that
reruns give the same bytes. Timings, names, ids and thread layout are left as recorded.
"""
import gzip
import json
import os
import sys

KEEP_ARGS = {"External id", "external id", "correlation", "Sequence number", "stream", "device",
             "Collective name", "In msg nelems", "Out msg nelems", "dtype", "Group size",
             "Input Dims", "Input type"}
KEEP_TOP = {"schemaVersion", "distributedInfo", "traceEvents"}

# (source path in HTA's tests/data, output name, keep only this many complete events or None)
TRACES = [
    ("nccl_parser_config/nccl_data.json.gz", "hta_ddp_nccl_3steps.json.gz", None),
    ("trace_filter/sampled_rank-1.json.gz", "hta_extid_is_correlation.json.gz", None),
    ("cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", "hta_cpu_gloo_only.json.gz", None),
    ("cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz",
     "hta_runtime_no_kernels.json.gz", 400),
    ("trace_file_list/inference_rank_1.json.gz", "hta_torch18_categories.json.gz", None),
    ("execution_trace/benchmark_simple_add_et.json.gz", "hta_execution_trace.json.gz", None),
]


def trim(doc, limit):
    if "traceEvents" not in doc:
        return doc  # not a profiler trace: kept whole (it is the case under test)
    out = {k: v for k, v in doc.items() if k in KEEP_TOP}
    events = []
    for e in doc["traceEvents"]:
        if e.get("ph") != "X" or e.get("cat") in ("ac2g", "fwdbwd"):
            continue
        if "args" in e:
            e["args"] = {k: v for k, v in e["args"].items() if k in KEEP_ARGS}
        events.append(e)
        if limit is not None and len(events) >= limit:
            break
    out["traceEvents"] = events
    return out


def main():
    hta = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    for src, dst, limit in TRACES:
        with gzip.open(os.path.join(hta, "tests", "data", src), "rt") as f:
            doc = json.load(f)
        text = json.dumps(trim(doc, limit), separators=(",", ":")).encode()
        with open(os.path.join(here, dst), "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as z:
                z.write(text)


if __name__ == "__main__":
    main()
