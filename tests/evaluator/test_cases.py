"""The case plan: stage 1 first, then standard cases, then outliers."""

from evaluator.cases import plan, timing_cases


def test_case_plan_orders_stage1_standard_then_outliers(suite):
    task = suite["Activation/gelu"]
    cpu = plan(task, on_gpu=False)
    assert cpu[0].size == "small" and cpu[0].dtype == task.primary_dtype and cpu[0].mode == "standard"
    assert all(c.size != "standard" for c in cpu)
    modes = [c.mode for c in cpu]
    assert modes == sorted(modes, key=lambda m: m == "outlier"), "outlier cases come last"
    assert {c.dtype for c in cpu} == set(task.dtypes) and len(cpu) == len(set(cpu))
    gpu = plan(task, on_gpu=True)
    assert gpu[0] == timing_cases(task)[0]
    assert [c for c in gpu if c.size == "standard"] == timing_cases(task)
