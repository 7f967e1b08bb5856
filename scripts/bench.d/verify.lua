-- wrk: GET /v1/verify with a bearer ID token (BENCH_TOKEN).
wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_TOKEN")
