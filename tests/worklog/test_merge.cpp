// kiln merge's library half: shards' worklogs combined by content, idempotently, the newer row of
// one key kept whatever the order, and bad inputs refused with nothing written; plus the refusal
// of worklogs on network file systems.
#include <sys/stat.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "kiln/worklog/file_system.hpp"
#include "kiln/worklog/merge.hpp"
#include "kiln/worklog/schema.hpp"
#include "kiln/worklog/sqlite.hpp"
#include "kiln/worklog/worklog.hpp"
#include "kiln_catch.hpp"
#include "temp_dir.hpp"
#include "worklog_helpers.hpp"

using namespace kiln::worklog;
using kiln_test::ContainsSubstring;
namespace fs = std::filesystem;

namespace {

const char* const kCpu = R"({"backend":"cpu","name":"AMD EPYC"})";
const char* const kContext = "0123456789abcdef0123456789abcdef";

// A shard's worklog: one session of `kernel` that measured `variants` on one problem, with an
// attempt for each and a failure of the last.
fs::path shard(const kiln_test::TempDir& dir, const std::string& name, const std::vector<std::string>& variants,
               const std::string& started_at, const std::string& device = kCpu,
               const std::string& context = kContext, const std::string& kiln_version = "0.1.0", int key_version = 2) {
  const fs::path path = dir / name;
  Worklog log = Worklog::open(path);
  Session s;
  s.kernel = "saxpy";
  s.strategy = "exhaustive";
  s.device = device;
  s.context_key = context;
  s.started_at = started_at;
  s.note = "seed 1, " + name;
  s.kiln_version = kiln_version;
  s.key_version = key_version;
  const auto id = log.start_session(s);
  for (std::size_t i = 0; i < variants.size(); ++i) {
    Measurement m;
    m.key = {context, "saxpy", variants[i], "h" + variants[i], "n=4096", Phase::bench};
    m.result = R"({"median_s":)" + std::to_string(1e-3 * static_cast<double>(i + 1)) + "}";
    m.median_s = 1e-3 * static_cast<double>(i + 1);
    m.session_id = id;
    m.created_at = started_at;
    log.put_measurement(m);
    Attempt a = worklog_test::make_attempt("saxpy", variants[i]);
    a.session_id = id;
    a.evidence = "measurement " + variants[i] + " @" + started_at;
    log.add_attempt(a);
  }
  VariantFailure f;
  f.key = {context, "saxpy", variants.back() + "_broken", "hb"};
  f.kind = FailureKind::compile;
  f.detail = "static_assert";
  f.session_id = id;
  f.created_at = started_at;
  log.put_variant_failure(f);
  log.end_session(id);
  return path;
}

// The content of a worklog, without the file's own ids.
std::multiset<std::string> content(const fs::path& path) {
  sqlite::OpenOptions options;
  options.read_only = true;
  sqlite::Database db(path, options);
  std::multiset<std::string> rows;
  const std::vector<std::string> queries = {
      "SELECT 'session', started_at, ended_at, kernel, strategy, device, context_key, note, key_version, kiln_version "
      "FROM sessions",
      "SELECT 'attempt', a.kernel, a.variant, a.verdict, a.evidence, a.result, s.note FROM attempts a LEFT JOIN "
      "sessions s ON s.id = a.session_id",
      "SELECT 'measurement', m.context_key, m.variant, m.variant_hash, m.problem_key, m.phase, m.result, m.created_at, "
      "s.note FROM measurements m LEFT JOIN sessions s ON s.id = m.session_id",
      "SELECT 'failure', context_key, variant, kind, detail, created_at FROM variant_failures",
      "SELECT 'link', f.evidence, t.evidence, l.kind FROM links l JOIN attempts f ON f.id = l.from_attempt JOIN "
      "attempts t ON t.id = l.to_attempt"};
  for (const auto& q : queries) {
    sqlite::Statement st = db.prepare(q, "read content");
    while (st.step()) {
      std::string row;
      for (int c = 0; c < st.column_count(); ++c) row += (st.is_null(c) ? "NULL" : st.get_text(c)) + "|";
      rows.insert(row);
    }
  }
  return rows;
}

struct FileState {
  std::string bytes;
  std::set<std::string> beside;
};
FileState state_of(const fs::path& path) {
  FileState s{kiln_test::read_file(path), {}};
  for (const auto& e : fs::directory_iterator(path.parent_path())) s.beside.insert(e.path().filename().string());
  return s;
}

}  // namespace

TEST_CASE("shards merge into one worklog, content-keyed and idempotent") {
  kiln_test::TempDir dir("kiln-merge");
  const fs::path a = shard(dir, "a.sqlite", {"saxpy__U1", "saxpy__U2"}, "2026-11-24T10:00:00.000Z");
  const fs::path b = shard(dir, "b.sqlite", {"saxpy__U4", "saxpy__U8"}, "2026-11-24T10:00:01.000Z");
  {
    Worklog log = Worklog::open(a, OpenMode::existing);
    const auto attempts = log.attempts();
    log.add_link(attempts[0].id, attempts[1].id, LinkKind::supports, "same trend");
  }
  const fs::path out = dir / "merged.sqlite";
  const auto report = merge_worklogs({a, b}, out);
  REQUIRE(report.size() == 2);
  CHECK(report[0].added.sessions == 1);
  CHECK(report[0].added.measurements == 2);
  CHECK(report[0].added.links == 1);
  CHECK(report[1].added.attempts == 2);
  CHECK(report[1].added.failures == 1);

  std::multiset<std::string> expected = content(a);
  for (const auto& row : content(b)) expected.insert(row);
  CHECK(content(out) == expected);
  {
    Worklog merged = Worklog::open(out, OpenMode::read_only);
    CHECK(merged.measurements(kContext, "saxpy").size() == 4);
    CHECK(merged.variant_failures(kContext, "saxpy").size() == 2);
    // (The full-text index's check writes: it runs on a writable connection below.)
    // Every measurement's session is the merged copy of the session that took it.
    for (const auto& m : merged.measurements(kContext, "saxpy")) {
      REQUIRE(m.session_id);
      CHECK(merged.session(*m.session_id)->note.find(m.key.variant <= "saxpy__U2" ? "a.sqlite" : "b.sqlite") !=
            std::string::npos);
    }
  }

  CHECK(Worklog::open(out, OpenMode::existing).integrity_problems() == std::vector<std::string>{});

  // Merging again (the output is merged into), or an input twice, adds nothing.
  const auto again = merge_worklogs({a, b, a}, out);
  REQUIRE(again.size() == 4);
  CHECK(again[0].path == out.string());  // the existing output, read first
  CHECK(again[0].is_output);
  CHECK_FALSE(again[1].is_output);
  CHECK(again[0].added.measurements == 4);
  for (std::size_t i = 1; i < again.size(); ++i) {
    const MergeCounts& n = again[i].added;
    CHECK(n.sessions + n.attempts + n.links + n.measurements + n.failures + n.replaced == 0);
  }
  CHECK(content(out) == expected);
  const fs::path twice = dir / "twice.sqlite";
  merge_worklogs({a, a}, twice);
  CHECK(content(twice) == content(a));
}

TEST_CASE("one key held with different content keeps the newer row, whatever the order") {
  kiln_test::TempDir dir("kiln-merge");
  const fs::path older = shard(dir, "older.sqlite", {"saxpy__U1"}, "2026-11-24T10:00:00.000Z");
  const fs::path newer = shard(dir, "newer.sqlite", {"saxpy__U1"}, "2026-11-24T11:00:00.000Z");
  {
    Worklog log = Worklog::open(newer, OpenMode::existing);
    Measurement m = *log.measurement({kContext, "saxpy", "saxpy__U1", "hsaxpy__U1", "n=4096", Phase::bench});
    m.result = R"({"median_s":0.5})";
    m.median_s = 0.5;
    log.put_measurement(m);
  }
  const auto one = merge_worklogs({older, newer}, dir / "one.sqlite");
  CHECK(one[1].added.replaced == 2);  // the timing and the failure
  merge_worklogs({newer, older}, dir / "two.sqlite");
  CHECK(content(dir / "one.sqlite") == content(dir / "two.sqlite"));
  Worklog merged = Worklog::open(dir / "one.sqlite", OpenMode::read_only);
  const auto m = merged.measurement({kContext, "saxpy", "saxpy__U1", "hsaxpy__U1", "n=4096", Phase::bench});
  REQUIRE(m);
  CHECK(m->median_s == 0.5);
  CHECK(merged.sessions().size() == 2);
}

TEST_CASE("kiln merge refuses bad inputs with one message and writes nothing") {
  kiln_test::TempDir dir("kiln-merge");
  const fs::path a = shard(dir, "a.sqlite", {"saxpy__U1"}, "2026-11-24T10:00:00.000Z");
  const fs::path out = dir / "merged.sqlite";
  auto refused = [&](const std::vector<fs::path>& inputs, const std::string& message) {
    const FileState before = state_of(a);
    CHECK_THROWS_WITH(merge_worklogs(inputs, out), ContainsSubstring(message));
    CHECK_FALSE(fs::exists(out));
    const FileState after = state_of(a);
    CHECK(after.bytes == before.bytes);
    CHECK(after.beside == before.beside);  // no output, no temporary file, no -wal beside an input
  };

  SECTION("different devices") {
    const fs::path h200 = shard(dir, "h200.sqlite", {"saxpy__U2"}, "2026-11-24T10:00:01.000Z",
                                R"({"backend":"cuda","name":"NVIDIA H200","compute_capability":"9.0"})",
                                "fedcba9876543210fedcba9876543210");
    refused({a, h200}, (dir / "h200.sqlite").string() +
                           ": kernel saxpy: tuned on NVIDIA H200 (cuda, compute capability 9.0) here and on AMD EPYC "
                           "(cpu) in " + a.string() + ": worklogs of different devices do not merge");
  }
  SECTION("different Kiln versions") {
    const fs::path later = shard(dir, "later.sqlite", {"saxpy__U2"}, "2026-11-24T10:00:01.000Z", kCpu,
                                 "fedcba9876543210fedcba9876543210", "0.2.0");
    refused({a, later}, "later.sqlite: kernel saxpy: tuned by Kiln 0.2.0 here and by Kiln 0.1.0 in " + a.string() +
                            ": worklogs of different Kiln versions do not merge");
  }
  SECTION("different key versions") {
    const fs::path legacy = shard(dir, "legacy.sqlite", {"saxpy__U2"}, "2026-11-24T10:00:01.000Z", kCpu,
                                  "0123456789abcdef", "", 1);
    refused({a, legacy}, "legacy.sqlite: kernel saxpy: its cache keys are of version 1 (FNV-1a 64) here and 2 "
                         "(XXH3-128) in " + a.string());
  }
  SECTION("other sources on the same device and Kiln") {
    const fs::path other = shard(dir, "other.sqlite", {"saxpy__U2"}, "2026-11-24T10:00:01.000Z", kCpu,
                                 "fedcba9876543210fedcba9876543210");
    refused({a, other}, "the kernel's sources, compiler or flags differ");
  }
  SECTION("one context, two devices") {
    const fs::path forged = shard(dir, "forged.sqlite", {"saxpy__U2"}, "2026-11-24T10:00:01.000Z",
                                  R"({"backend":"cpu","name":"Intel Xeon"})");
    refused({a, forged}, "forged.sqlite: context " + std::string(kContext) +
                             " is Intel Xeon (cpu) there and AMD EPYC (cpu) in " + a.string());
  }
  SECTION("a corrupt file") {
    const fs::path corrupt = dir / "corrupt.sqlite";
    std::string bytes = kiln_test::read_file(a);
    bytes.resize(bytes.size() / 2);  // a copy cut short
    kiln_test::write_file(corrupt, bytes);
    CHECK_THROWS_WITH(merge_worklogs({a, corrupt}, out), ContainsSubstring(corrupt.string() + ": corrupt"));
    CHECK_FALSE(fs::exists(out));
    kiln_test::write_file(corrupt, std::string(4096, 'x'));
    refused({a, corrupt}, corrupt.string() + ": not a Kiln worklog (the file is not an SQLite database)");
  }
  SECTION("a missing file") { refused({a, dir / "missing.sqlite"}, (dir / "missing.sqlite").string() + ": no such worklog"); }
  SECTION("a folder or a FIFO in a worklog's place") {
    fs::create_directory(dir / "folder.sqlite");
    refused({a, dir / "folder.sqlite"}, (dir / "folder.sqlite").string() + ": a folder, not a worklog file");
    REQUIRE(mkfifo((dir / "fifo.sqlite").c_str(), 0600) == 0);
    refused({a, dir / "fifo.sqlite"}, (dir / "fifo.sqlite").string() + ": a FIFO, not a worklog file");
  }
  SECTION("a worklog of a newer Kiln") {
    const fs::path newer = dir / "newer.sqlite";
    fs::copy_file(a, newer);
    sqlite::OpenOptions options;
    options.wal = false;
    sqlite::Database(newer, options).exec("PRAGMA user_version = 99", "pretend a newer Kiln wrote it");
    refused({a, newer}, "worklog schema version 99 is newer than this Kiln");
  }
}

TEST_CASE("an existing output is history: it takes another run's shards, and a refused merge leaves it as it was") {
  kiln_test::TempDir dir("kiln-merge");
  const fs::path a = shard(dir, "a.sqlite", {"saxpy__U1"}, "2026-11-24T10:00:00.000Z");
  const fs::path out = dir / "merged.sqlite";
  merge_worklogs({a}, out);
  // The next run: a newer Kiln, so a new context; its shards agree with each other.
  const fs::path s0 = shard(dir, "s0.sqlite", {"saxpy__U2"}, "2026-11-25T10:00:00.000Z", kCpu,
                            "fedcba9876543210fedcba9876543210", "0.2.0");
  const fs::path s1 = shard(dir, "s1.sqlite", {"saxpy__U4"}, "2026-11-25T10:00:01.000Z", kCpu,
                            "fedcba9876543210fedcba9876543210", "0.2.0");
  const fs::path corrupt = dir / "corrupt.sqlite";
  kiln_test::write_file(corrupt, std::string(4096, 'x'));
  const std::string before = kiln_test::read_file(out);
  CHECK_THROWS_WITH(merge_worklogs({s0, corrupt}, out), ContainsSubstring("not a Kiln worklog"));
  CHECK(kiln_test::read_file(out) == before);
  const auto report = merge_worklogs({s0, s1}, out);
  CHECK(report[1].added.sessions == 1);
  CHECK(report[2].added.sessions == 1);
  Worklog merged = Worklog::open(out, OpenMode::read_only);
  CHECK(merged.sessions().size() == 3);
  CHECK(merged.measurements("fedcba9876543210fedcba9876543210", "saxpy").size() == 2);
  CHECK(merged.measurements(kContext, "saxpy").size() == 1);
}

TEST_CASE("a worklog from before key versions merges: its sessions are of key version 1") {
  kiln_test::TempDir dir("kiln-merge");
  const fs::path old = dir / "v5.sqlite";
  {
    sqlite::Database db(old);
    schema::prepare(db, schema::migrations().first(5));
    db.exec("INSERT INTO sessions (kernel, strategy, context_key, device) VALUES ('saxpy', 'exhaustive', "
            "'0123456789abcdef', '{\"name\":\"AMD EPYC\"}')",
            "a session of before version 6");
  }
  const std::string bytes = kiln_test::read_file(old);
  merge_worklogs({old}, dir / "merged.sqlite");
  CHECK(kiln_test::read_file(old) == bytes);
  Worklog merged = Worklog::open(dir / "merged.sqlite", OpenMode::read_only);
  REQUIRE(merged.sessions().size() == 1);
  CHECK(merged.sessions()[0].key_version == 1);
  CHECK(merged.sessions()[0].kiln_version.empty());
}

TEST_CASE("worklogs are never written on a network file system") {
  CHECK(network_file_system_name(0x6969) == "NFS");
  CHECK(network_file_system_name(0xFF534D42) == "CIFS/SMB");
  CHECK(network_file_system_name(0x0BD00BD0) == "Lustre");
  CHECK(network_file_system_name(0x47504653) == "GPFS (IBM Spectrum Scale)");
  CHECK_FALSE(network_file_system_name(0xEF53));    // ext4
  CHECK_FALSE(network_file_system_name(0x58465342));  // XFS
  CHECK_FALSE(network_file_system_name(0x01021994));  // tmpfs
  kiln_test::TempDir dir("kiln-merge");
  // The test machine's temporary folder is local (else this test has nothing to say).
  REQUIRE_FALSE(network_file_system_of(dir.path()));
  CHECK_FALSE(network_file_system_of(dir / "not/yet/there.sqlite"));
  CHECK_NOTHROW(require_local_file_system(dir / "w.sqlite"));
}
