"""Monte Carlo sweeps: many simulated runs of a scenario under latency and fault
distributions and parameter grids, on all cores or a dask cluster, aggregated as they stream."""
