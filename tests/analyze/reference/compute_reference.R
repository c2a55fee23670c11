# Reference values for tests/analyze/statistics_test.cpp, computed by R itself (base R only, no
# CRAN packages) from the committed fixtures/*.csv, written to expected.json.
#
# R is NOT a build or CI dependency: expected.json is committed and the C++ test only reads it.
# Generated with: R version 4.2.2 Patched (2022-11-10 r83330), Debian 12 package
# r-base-core 4.2.2.20221110-2 (installed with `apt-get install -y r-base-core`).
# Regenerate, from the repository root:
#   Rscript tests/analyze/reference/compute_reference.R
#
# What is computed and how (every value is R's own unless marked "formula"):
#   describe: mean(), sd(), t.test(x)$conf.int (95 %), median(), quantile(type = 7) at 0.95 and
#             0.99, min(), max(). t.test refuses constant data; there the CI is the formula
#             mean -/+ qt(0.975, n - 1) * sd / sqrt(n) (= [mean, mean]) and ci_source says so.
#   welch:    t.test(a, b) (var.equal = FALSE): statistic, parameter (df), p.value; null where R
#             refuses (n < 2 on a side, or "data are essentially constant").
#   wilcox:   wilcox.test(a, b, exact = FALSE, correct = TRUE): statistic W, p.value; null where R
#             refuses (an empty side) or returns p = NA (all values tied, SIGMA = 0). R does not
#             return z, so z is re-derived with R's own formula from stats:::wilcox.test.default and
#             checked to reproduce R's p.value exactly.
#   cohens_d: formula, (mean(a) - mean(b)) / sqrt(((na-1) var(a) + (nb-1) var(b)) / (na+nb-2)).
#   cliffs_delta: definition over all pairs, mean(sign(outer(a, b, "-"))) -- O(na nb), fine here.
# The values R parsed from each CSV are stored too ("a_values", "b_values", %.17g) so that the C++
# test can check it parsed exactly the same doubles before comparing anything.

args <- commandArgs(trailingOnly = FALSE)
here <- dirname(normalizePath(sub("^--file=", "", args[grep("^--file=", args)])))

num <- function(x) {
  if (is.null(x) || length(x) == 0 || is.na(x)) return("null")
  stopifnot(is.finite(x))
  sprintf("%.17g", x)
}
arr <- function(x) paste0("[", paste(vapply(x, num, ""), collapse = ", "), "]")
obj <- function(fields, indent) {
  pad <- strrep(" ", indent)
  body <- paste0(pad, "  \"", names(fields), "\": ", unlist(fields), collapse = ",\n")
  paste0("{\n", body, "\n", pad, "}")
}
attempt <- function(expr) tryCatch(expr, error = function(e) NULL)

read_case <- function(path) {
  lines <- readLines(path)
  stopifnot(lines[1] == "sample,value_ms")
  rows <- strsplit(lines[-1], ",", fixed = TRUE)
  side <- vapply(rows, `[`, "", 1)
  value <- as.numeric(vapply(rows, `[`, "", 2))
  list(a = value[side == "a"], b = value[side == "b"])
}

describe <- function(x, indent) {
  n <- length(x)
  f <- list(n = as.character(n), mean = "null", sd = "null", ci95_low = "null",
            ci95_high = "null", ci_source = "null", median = "null", p95 = "null",
            p99 = "null", min = "null", max = "null")
  if (n >= 1) {
    q <- quantile(x, c(0.95, 0.99), type = 7, names = FALSE)
    f$mean <- num(mean(x)); f$median <- num(median(x))
    f$p95 <- num(q[1]); f$p99 <- num(q[2]); f$min <- num(min(x)); f$max <- num(max(x))
  }
  if (n >= 2) {
    f$sd <- num(sd(x))
    ci <- attempt(t.test(x)$conf.int)
    if (!is.null(ci)) {
      f$ci_source <- "\"t.test\""
    } else {
      half <- qt(0.975, n - 1) * sd(x) / sqrt(n)
      ci <- c(mean(x) - half, mean(x) + half)
      f$ci_source <- "\"formula\""
    }
    f$ci95_low <- num(ci[1]); f$ci95_high <- num(ci[2])
  }
  obj(f, indent)
}

welch <- function(a, b, indent) {
  r <- attempt(t.test(a, b, var.equal = FALSE))
  if (is.null(r)) return("null")
  obj(list(t = num(unname(r$statistic)), df = num(unname(r$parameter)), p = num(r$p.value)),
      indent)
}

wilcox <- function(a, b, indent) {
  r <- attempt(wilcox.test(a, b, exact = FALSE, correct = TRUE))
  if (is.null(r) || is.na(r$p.value)) return("null")
  # R's own steps (stats:::wilcox.test.default, two-sided, correct = TRUE), to expose z.
  na <- length(a); nb <- length(b)
  rk <- rank(c(a, b))
  w <- sum(rk[seq_along(a)]) - na * (na + 1) / 2
  nties <- table(rk)
  z <- w - na * nb / 2
  sigma <- sqrt((na * nb / 12) * ((na + nb + 1) - sum(nties^3 - nties) / ((na + nb) * (na + nb - 1))))
  z <- (z - sign(z) * 0.5) / sigma
  p <- 2 * min(pnorm(z), pnorm(z, lower.tail = FALSE))
  stopifnot(identical(unname(r$statistic), w), identical(r$p.value, p))
  obj(list(w = num(w), z = num(z), p = num(r$p.value)), indent)
}

cohens_d <- function(a, b) {
  na <- length(a); nb <- length(b)
  if (na < 2 || nb < 2) return("null")
  pooled <- sqrt(((na - 1) * var(a) + (nb - 1) * var(b)) / (na + nb - 2))
  if (pooled == 0) return("null")
  num((mean(a) - mean(b)) / pooled)
}

cliffs_delta <- function(a, b) {
  if (length(a) == 0 || length(b) == 0) return("null")
  num(mean(sign(outer(a, b, "-"))))
}

files <- sort(list.files(file.path(here, "fixtures"), pattern = "\\.csv$"), method = "radix")
cases <- character(0)
for (file in files) {
  s <- read_case(file.path(here, "fixtures", file))
  cases <- c(cases, obj(list(
    name = paste0("\"", sub("\\.csv$", "", file), "\""),
    a_values = arr(s$a), b_values = arr(s$b),
    describe_a = describe(s$a, 6), describe_b = describe(s$b, 6),
    welch = welch(s$a, s$b, 6), wilcox = wilcox(s$a, s$b, 6),
    cohens_d = cohens_d(s$a, s$b), cliffs_delta = cliffs_delta(s$a, s$b)), 4))
}
json <- paste0("{\n  \"generator\": \"tests/analyze/reference/compute_reference.R\",\n",
               "  \"r_version\": \"", R.version.string, "\",\n",
               "  \"cases\": [\n    ", paste(cases, collapse = ",\n    "), "\n  ]\n}\n")
writeLines(json, file.path(here, "expected.json"), sep = "")
cat("wrote", file.path(here, "expected.json"), "with", length(cases), "cases\n")
