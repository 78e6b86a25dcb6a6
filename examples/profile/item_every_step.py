"""TPL203: `.item()` on every training step makes the host wait for the GPU.

`perf-lint profile item_every_step.py --rule TPL203` counts the syncs per step.
"""

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(128, 256, device=device)
y = torch.randn(128, 1, device=device)

running = 0.0
for step in range(200):
    loss = torch.nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    running += loss.item()
print(running / 200)
