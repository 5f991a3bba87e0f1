"""DDP communication hooks that time every bucket's real all-reduce.

Each hook does what PyTorch's own hook does (torch 1.13,
torch/distributed/algorithms/ddp_comm_hooks/default_hooks.py: allreduce_hook lines 8-40 —
divide the bucket by the world size, then dist.all_reduce(async_op=True).get_future();
fp16_compress_hook lines 43-73 and bf16_compress_hook lines 76-109 — cast, divide, all-reduce,
copy back in a .then callback) and records, per bucket, when the Reducer handed it over
(ready), when the all-reduce was launched (start) and when its future completed (end: the
.then callback, which Gloo runs on its worker thread as the work finishes).

overlap=False has no DDP argument; it is expressed with the same hook mechanism: every bucket's
hook returns a pending torch.futures.Future, and the last bucket's hook (GradBucket.is_last(),
i.e. once backward produced every gradient) launches all the all-reduces in bucket order and
completes the pending futures from their callbacks.

Register with ddp.register_comm_hook(recorder, recorder.hook) (torch/nn/parallel/
distributed.py:1380 register_comm_hook); read recorder.buckets after each backward and clear()
before the next synchronising backward.
"""

import threading
import time

import torch
import torch.distributed as dist

_WIRE_DTYPE = {"none": None, "fp16": torch.float16, "bf16": torch.bfloat16}


def now_ns():
    return time.perf_counter_ns()


class BucketRecorder:
    def __init__(self, world_size, hook_name="none", overlap=True):
        if hook_name not in _WIRE_DTYPE:
            raise ValueError(hook_name)
        self.world = world_size
        self.wire = _WIRE_DTYPE[hook_name]
        self.overlap = overlap
        self.lock = threading.Lock()
        self.buckets = {}  # index -> {"bytes", "ready_ns", "start_ns", "end_ns"}
        self.last_return_ns = 0  # when the last bucket's hook returned to the Reducer
        self._deferred = []

    def clear(self):
        with self.lock:
            self.buckets = {}
            self.last_return_ns = 0
            self._deferred = []

    def _launch(self, bucket, done=None):
        """Starts bucket's all-reduce as PyTorch's hook does; returns the hook's future."""
        i = bucket.index()
        buf = bucket.buffer()
        with self.lock:
            self.buckets[i]["start_ns"] = now_ns()
        if self.wire is None:
            tensor = buf.div_(self.world)  # default_hooks.py:15
        else:
            tensor = buf.to(self.wire).div_(self.world)  # default_hooks.py:60 / :96
        fut = dist.all_reduce(tensor, async_op=True).get_future()

        def finish(f):
            t = now_ns()
            with self.lock:
                self.buckets[i]["end_ns"] = t
            if self.wire is None:
                result = f.value()[0]  # default_hooks.py:20
            else:
                result = buf.copy_(f.value()[0])  # default_hooks.py:67-71
            if done is not None:
                done.set_result(result)
            return result

        return fut.then(finish)

    def hook(self, state, bucket):
        i = bucket.index()
        with self.lock:
            self.buckets[i] = {"bytes": bucket.buffer().numel() * bucket.buffer().element_size(),
                               "ready_ns": now_ns(), "start_ns": 0, "end_ns": 0}
        if self.overlap:
            fut = self._launch(bucket)
        else:
            fut = torch.futures.Future()
            self._deferred.append((bucket, fut))
            if bucket.is_last():
                for b, f in self._deferred:
                    self._launch(b, done=f)
                self._deferred = []
        if bucket.is_last():
            self.last_return_ns = now_ns()
        return fut

    def step_buckets(self, step_start_ns):
        """Per bucket in index order: {bytes, ready_s, start_s, end_s} from step_start_ns."""
        with self.lock:
            rows = [self.buckets[i] for i in sorted(self.buckets)]
        s = lambda ns: (ns - step_start_ns) * 1e-9
        return [{"bytes": r["bytes"], "ready_s": s(r["ready_ns"]), "start_s": s(r["start_ns"]),
                 "end_s": s(r["end_ns"])} for r in rows]

    def exposed_ns(self, backward_end_ns):
        """Communication the backward waited for: from the last hook's return (backward's
        compute done) to the last all-reduce's end, at most until backward returned (the
        Reducer's finalize_backward then copies the buckets back: compute, as
        calibrate/exec/reducer.hpp counts it)."""
        with self.lock:
            if not self.buckets or not self.last_return_ns:
                return 0
            last_end = max(r["end_ns"] for r in self.buckets.values())
            return max(0, min(last_end, backward_end_ns) - self.last_return_ns)
