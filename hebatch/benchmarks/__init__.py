"""Benchmarks shipped with the package (run them with `hebatch bench NAME` or
`python -m hebatch.benchmarks.NAME`): ntt, bfv and zk on GPUs, zk_cpu on CPUs, bfv_depth (the
multiplicative depth of the BFV presets). All time through hebatch.benchmarks.harness and write their
JSON result where --out points, else into the current directory.
"""
