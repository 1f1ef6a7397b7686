"""HTEB and mteb side by side: HTEB data as mteb tasks (`tasks`, `adapter`; the rows laid out per
task type by `task_data`), a revision as an mteb Benchmark with HTEB's aggregation (`benchmark`), and mteb's
result folders written (`layout`) and read (`results`). mteb's models as an HTEB encoder are
encoding/mteb_encoder.py."""
