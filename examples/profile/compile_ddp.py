"""TPL301: the model is compiled first and wrapped in DistributedDataParallel afterwards.

Run it with torchrun (or let `perf-lint profile` start a one-process group):
`perf-lint profile compile_ddp.py --rule TPL301`.
"""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

cuda = torch.cuda.is_available()
dist.init_process_group("nccl" if cuda else "gloo")
rank = int(os.environ.get("LOCAL_RANK", 0))
device = torch.device("cuda", rank) if cuda else torch.device("cpu")

model = torch.nn.Sequential(
    torch.nn.Linear(512, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 1024), torch.nn.GELU(),
    torch.nn.Linear(1024, 10),
).to(device)
model = torch.compile(model)
model = DDP(model, device_ids=[rank] if cuda else None)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

x = torch.randn(256, 512, device=device)
y = torch.randint(0, 10, (256,), device=device)
for step in range(100):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
dist.destroy_process_group()
