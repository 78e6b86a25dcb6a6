"""TPL104: DataLoader workers shut down and started again at every epoch.

Each worker opens the data store on first use (0.2 s here, standing in for opening HDF5 or
LMDB files): without persistent workers every epoch waits for that again.
`perf-lint profile workers_respawned.py --rule TPL104` times whole epochs and the wait for
each epoch's first batch.
"""

import time

import torch
from torch.utils.data import DataLoader, Dataset


class Shards(Dataset):
    """Rows of a store that each worker process opens once, lazily."""

    def __init__(self):
        self.store = None

    def __len__(self):
        return 256

    def __getitem__(self, index):
        if self.store is None:
            time.sleep(0.2)  # h5py.File(...), lmdb.open(...)
            self.store = torch.rand(1024, 64)
        return self.store[index % 1024], index % 10


model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(Shards(), batch_size=32, num_workers=2)

for epoch in range(20):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
