// Streaming CSV reader on libcsv (see csv_reader.hpp).
#include "csv_reader.hpp"

#include <csv.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "error.hpp"

namespace dsekp::analyze {
namespace {

constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
// Strict: a stray quote is a parse error that we turn into one malformed record and recover from,
// instead of libcsv's lenient mode silently reading it as text. STRICT_FINI (which needs STRICT)
// reports a quoted field still open at the end of the file. REPALL_NL reports every line end,
// which blank-line counting needs.
constexpr unsigned char kOptions = CSV_STRICT | CSV_STRICT_FINI | CSV_REPALL_NL;

// State shared with libcsv's C callbacks. Exceptions must not unwind through libcsv's C frames, so
// the callbacks catch them into `error` and ignore everything after it.
struct ParseState {
  CsvSink* sink = nullptr;
  bool have_header = false;
  std::vector<bool> wanted;
  std::string arena;  // text of the current record's wanted fields
  std::vector<std::pair<std::size_t, std::size_t>> spans;  // (offset, length) in arena, per column
  std::vector<std::string_view> views;
  std::size_t field_index = 0;
  bool in_record = false;  // a field of the current record has been delivered
  bool last_record_ended_with_cr = false;
  // Line numbering: the file is fed to libcsv one line at a time, so the line being fed is known;
  // a record starts on the first line with content fed after the previous record ended.
  std::uint64_t line = 1;
  bool between_records = true;
  std::uint64_t record_line = 1;
  CsvFileStats stats;
  std::exception_ptr error;

  void on_field(const char* text, std::size_t length) {
    if (!in_record) {
      in_record = true;
      field_index = 0;
      arena.clear();
      for (auto& span : spans) span = {0, 0};
    }
    const bool keep = !have_header || (field_index < wanted.size() && wanted[field_index]);
    if (keep) {
      if (spans.size() <= field_index) spans.resize(field_index + 1, {0, 0});
      spans[field_index] = {arena.size(), length};
      arena.append(text, length);
    }
    ++field_index;
  }

  void end_record(int terminator) {
    if (!in_record) {
      // A line end with no fields: a blank line, or the LF of a CRLF whose CR ended the record.
      if (terminator == CSV_LF) {
        if (!last_record_ended_with_cr) ++stats.blank_lines;
        last_record_ended_with_cr = false;
      }
      return;
    }
    in_record = false;
    between_records = true;
    last_record_ended_with_cr = terminator == CSV_CR;
    const std::size_t columns = have_header ? wanted.size() : field_index;
    views.assign(columns, std::string_view{});
    for (std::size_t i = 0; i < columns && i < field_index && i < spans.size(); ++i) {
      if (have_header && !wanted[i]) continue;
      views[i] = std::string_view(arena).substr(spans[i].first, spans[i].second);
    }
    if (!have_header) {
      if (!views.empty() && views[0].starts_with("\xEF\xBB\xBF")) views[0].remove_prefix(3);
      wanted = sink->on_header(views);
      wanted.resize(columns, false);
      have_header = true;
    } else {
      ++stats.records;
      sink->on_record(CsvRecord{record_line, field_index, views});
    }
  }

  // Drops the record being parsed (libcsv reported it malformed) and tells the sink.
  void malformed(const std::string& reason, const std::filesystem::path& path) {
    if (!have_header)
      throw AnalyzeError(path.string() + ": the header line is not valid CSV (" + reason + ")");
    in_record = false;
    between_records = true;
    ++stats.records;
    sink->on_malformed(record_line, reason);
  }
};

void field_callback(void* text, std::size_t length, void* data) {
  auto* state = static_cast<ParseState*>(data);
  if (state->error) return;
  try {
    state->on_field(static_cast<const char*>(text), length);
  } catch (...) {
    state->error = std::current_exception();
  }
}

void record_callback(int terminator, void* data) {
  auto* state = static_cast<ParseState*>(data);
  if (state->error) return;
  try {
    state->end_record(terminator);
  } catch (...) {
    state->error = std::current_exception();
  }
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

class Parser {
 public:
  explicit Parser(const std::filesystem::path& path) : path_(path) { init(); }
  ~Parser() { csv_free(&parser_); }
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  csv_parser* get() { return &parser_; }
  // After a parse error libcsv keeps failing; a fresh parser resumes at the next line.
  void reset() {
    csv_free(&parser_);
    init();
  }

 private:
  void init() {
    if (csv_init(&parser_, kOptions) != 0)
      throw AnalyzeError(path_.string() + ": cannot initialise the CSV parser");
  }
  csv_parser parser_{};
  std::filesystem::path path_;
};

bool has_content(const char* data, std::size_t length) {
  for (std::size_t i = 0; i < length; ++i)
    if (data[i] != '\n' && data[i] != '\r') return true;
  return false;
}

}  // namespace

CsvFileStats read_csv(const std::filesystem::path& path, CsvSink& sink) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw AnalyzeError(path.string() + ": cannot open: " + std::strerror(errno));

  Parser parser(path);
  ParseState state;
  state.sink = &sink;
  std::vector<char> buffer(kChunkBytes);
  bool skipping = false;  // after a parse error: discarding up to the next line end
  bool ended_with_newline = false;
  for (;;) {
    const std::size_t got = std::fread(buffer.data(), 1, buffer.size(), file.get());
    if (got == 0) {
      if (std::ferror(file.get()))
        throw AnalyzeError(path.string() + ": read error: " + std::strerror(errno));
      break;
    }
    state.stats.bytes += got;
    const char* const end = buffer.data() + got;
    for (const char* p = buffer.data(); p < end;) {
      const auto* newline =
          static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
      const char* const stop = newline != nullptr ? newline + 1 : end;
      const auto length = static_cast<std::size_t>(stop - p);
      if (!skipping) {
        if (state.between_records && has_content(p, length)) {
          state.between_records = false;
          state.record_line = state.line;
        }
        const std::size_t used =
            csv_parse(parser.get(), p, length, field_callback, record_callback, &state);
        if (state.error) std::rethrow_exception(state.error);
        if (used != length) {
          if (csv_error(parser.get()) != CSV_EPARSE)
            throw AnalyzeError(path.string() + ": CSV parser error near line " +
                               std::to_string(state.line) + ": " +
                               csv_strerror(csv_error(parser.get())));
          state.malformed(
              "malformed quoting: a quote inside an unquoted field or text after a "
              "closing quote (RFC 4180)",
              path);
          parser.reset();
          skipping = newline == nullptr;
        }
      } else if (newline != nullptr) {
        skipping = false;
      }
      if (newline != nullptr) ++state.line;
      ended_with_newline = newline != nullptr;
      p = stop;
    }
  }
  if (csv_fini(parser.get(), field_callback, record_callback, &state) != 0) {
    if (state.error) std::rethrow_exception(state.error);
    const std::uint64_t last_line = state.line - (ended_with_newline ? 1 : 0);
    state.malformed("unterminated quoted field: the file ends inside it (lines " +
                        std::to_string(state.record_line) + " to " + std::to_string(last_line) +
                        ")",
                    path);
  }
  if (state.error) std::rethrow_exception(state.error);
  if (!state.have_header) throw AnalyzeError(path.string() + ": empty file (no header line)");
  return state.stats;
}

}  // namespace dsekp::analyze
