"""The rule catalog. Codes are public API: stable, documented, never reused."""

from __future__ import annotations

from .base import Example, Rule
from .benchmarks import AllocationInTimedStatement, TimingWithoutWarmup
from .compile import CompiledStateDict, CompileInLoop
from .dataloader import NonBlockingWithoutPinnedMemory, PinnedMemoryMissing, SynchronousDataLoader
from .debugging import DebugModeLeftOn
from .devices import CpuTensorMovedEachStep
from .distributed import CompileBeforeDDP
from .gradients import EvaluationWithGradients, GradientsZeroedInPlace
from .notebook import MisplacedCellMagic
from .parallel import DataParallelTraining
from .profiler_sessions import CompileInProfilerWindow, ProfilerRecordingOptions, ProfileWithoutSchedule
from .profiling import CudnnBenchmarkUnderProfiler
from .syncs import HostSyncEveryStep
from .syntax import SyntaxErrorRule
from .timing import TimingMagicWithoutSync, UnsynchronizedTiming
from .workers import NonPersistentWorkers

ALL_RULES: tuple[type[Rule], ...] = tuple(
    sorted(
        (
            SynchronousDataLoader,
            PinnedMemoryMissing,
            NonBlockingWithoutPinnedMemory,
            UnsynchronizedTiming,
            TimingMagicWithoutSync,
            CompileBeforeDDP,
            CudnnBenchmarkUnderProfiler,
            NonPersistentWorkers,
            HostSyncEveryStep,
            CompileInLoop,
            CompiledStateDict,
            DataParallelTraining,
            ProfileWithoutSchedule,
            ProfilerRecordingOptions,
            CompileInProfilerWindow,
            DebugModeLeftOn,
            TimingWithoutWarmup,
            AllocationInTimedStatement,
            CpuTensorMovedEachStep,
            EvaluationWithGradients,
            GradientsZeroedInPlace,
            MisplacedCellMagic,
        ),
        key=lambda rule: rule.code,
    )
)
# every code perf-lint reports: TPL000 (the engine's own) and the rules of the pass
CATALOG: tuple[type[Rule], ...] = (SyntaxErrorRule, *ALL_RULES)
_BY_CODE = {rule.code: rule for rule in CATALOG}


def rule_by_code(code: str) -> type[Rule] | None:
    return _BY_CODE.get(code.upper())


def enabled_rules(config, path: str | None = None) -> list[type[Rule]]:
    return [rule for rule in ALL_RULES if config.enabled(rule.code, path)]


__all__ = ["ALL_RULES", "CATALOG", "Example", "Rule", "enabled_rules", "rule_by_code"]
