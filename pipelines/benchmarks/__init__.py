"""Benchmark questions with gold legal references: Polish entrance exams (JSONL and the official
PDFs) and GerLayQA, loaded into one Arrow table (``schemas.arrow.BENCHMARK_QUESTIONS``).

Plain functions over dataclasses and Arrow tables, no orchestrator: the Dagster asset binds
:func:`pipelines.benchmarks.benchmark_table.build_benchmark_table`.
"""
