"""TPL401: cudnn.benchmark = True while profiling: each run may pick other kernels.

`perf-lint profile cudnn_profile.py --rule TPL401`.
"""

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.backends.cudnn.benchmark = True

model = torch.nn.Sequential(
    torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
    torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
    torch.nn.Flatten(), torch.nn.Linear(64, 10),
).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
images = torch.randn(16, 3, 32, 32, device=device)
labels = torch.randint(0, 10, (16,), device=device)

with torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup=1, active=3)) as prof:
    for step in range(20):
        loss = torch.nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        prof.step()
print(prof.key_averages().table(row_limit=10))
