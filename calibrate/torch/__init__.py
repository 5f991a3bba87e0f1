"""calibrate.torch: ddpsim's programs that run PyTorch itself (ddpsim-validate --runner torch,
ddpsim-calibrate --backend torch), as one package importable from the source tree's root:

    PYTHONPATH=$SRC:$SRC/python python3 -m calibrate.torch.ddp_runner POINT.json --workload W ...
    PYTHONPATH=$SRC:$SRC/python python3 -m calibrate.torch.torch_calibrate P.json --workload W ...

(cmake --install puts both packages in <prefix>/share/ddpsim/python; the C++ programs set
PYTHONPATH themselves, model/process_env.hpp.) Its modules import torch; this file does not.
Files, results and the context block go through ddpsim_torch.records (python/ddpsim_torch), the
one writer of ddpsim's Python; starting ranks goes through program.py.
"""
