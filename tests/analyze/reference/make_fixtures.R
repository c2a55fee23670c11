# Generates the fixture samples under fixtures/ (one CSV per case: `sample,value_ms`, sample is
# `a` or `b`). Run once; the CSVs are committed and are the inputs of record, so this script only
# documents where they came from (R's RNG streams could change between R versions, the CSVs don't).
# Values are integers or have at most 3 decimals so that every CSV parser yields the same doubles.
# Regenerate (from the repository root), then re-run compute_reference.R:
#   Rscript tests/analyze/reference/make_fixtures.R
# Written with R 4.2.2 (Debian 12 r-base-core 4.2.2.20221110-2), base R only.

args <- commandArgs(trailingOnly = FALSE)
here <- dirname(normalizePath(sub("^--file=", "", args[grep("^--file=", args)])))
out_dir <- file.path(here, "fixtures")
dir.create(out_dir, showWarnings = FALSE)

RNGkind("Mersenne-Twister", "Inversion", "Rejection")
set.seed(20240611)

write_case <- function(name, a, b) {
  lines <- c("sample,value_ms",
             if (length(a)) paste0("a,", format(a, scientific = FALSE, trim = TRUE, digits = 15)),
             if (length(b)) paste0("b,", format(b, scientific = FALSE, trim = TRUE, digits = 15)))
  writeLines(lines, file.path(out_dir, paste0(name, ".csv")))
}

# Latency-like integers in ms, PSK lower and wider than DSEKP as in Table 6; many ties.
write_case("normal_ties", round(rnorm(200, 283, 60)), round(rnorm(220, 360, 45)))
# Non-integer values (3 decimals), some negative (clock-offset-corrected latencies can be).
write_case("decimals", round(rnorm(150, 1.5, 3), 3), round(rnorm(180, 2.25, 3.5), 3))
# Too small for sd / CI / t-test on one side; the rank-sum and Cliff's delta still exist.
write_case("n1", 412, c(283, 290, 301, 275, 350))
write_case("n1_n1", 300, 280)
write_case("n2", c(283, 291), c(355, 360))
# Same data on both sides: t = 0, W = na nb / 2, p = 1, d = 0, delta = 0.
same <- round(rnorm(60, 300, 40) / 5) * 5
write_case("identical", same, same)
# Zero variance: R refuses the t-test ("data are essentially constant"), the rank-sum has SIGMA = 0.
write_case("all_equal", rep(300, 8), rep(300, 6))
# Zero variance in each sample but different values: t-test refused, rank-sum defined, d undefined.
write_case("all_equal_shifted", rep(300, 8), rep(360, 6))
write_case("empty_a", numeric(0), c(281, 290, 305))
write_case("empty_both", numeric(0), numeric(0))
# Stalls above the 10 s cut of the paper's pipeline: the statistics must not drop them.
write_case("outliers",
           c(round(rnorm(245, 283, 70)), 10001, 12000, 15500, 23000, 30000),
           round(rnorm(250, 360, 50)))
# Clear separation: p-values far below 1e-100, still representable as normal doubles.
write_case("tiny_p", round(rnorm(300, 283, 40)), round(rnorm(300, 360, 40)))
# Shift tuned so that R's Welch p-value is subnormal (below 2.2e-308): reported as 0 by design.
base_a <- round(rnorm(300, 283, 20))
base_b <- round(rnorm(300, 283, 20))
shift <- NA
for (s in 50:200) {
  p <- t.test(base_a, base_b + s)$p.value
  if (p > 0 && p < .Machine$double.xmin) { shift <- s; break }
}
stopifnot(!is.na(shift))
write_case("subnormal_t", base_a, base_b + shift)
# Complete separation with 1000 values each: |z| > 37.5, both p-values underflow to 0 in R.
write_case("separated", round(runif(1000, 100, 299)), round(runif(1000, 300, 499)))
