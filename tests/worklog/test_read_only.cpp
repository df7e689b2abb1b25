// Opening a worklog for reading (OpenMode::read_only): reads what was committed, writes nothing --
// no schema into an empty or foreign file, no -wal or -shm beside the file -- and works on a
// read-only file and in a read-only directory.
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "kiln/error.hpp"
#include "kiln/worklog/worklog.hpp"
#include "kiln_catch.hpp"
#include "temp_dir.hpp"
#include "worklog_helpers.hpp"

using kiln::worklog::OpenMode;
using kiln::worklog::Worklog;
using kiln_test::ContainsSubstring;
using worklog_test::make_attempt;

namespace fs = std::filesystem;

namespace {

// A closed worklog with one attempt: the last connection checkpointed it and removed its -wal.
fs::path closed_worklog(const fs::path& dir) {
  const fs::path path = dir / "worklog.sqlite";
  Worklog log = Worklog::open(path);
  log.add_attempt(make_attempt("softmax_cuda", "softmax_cuda__VEC8"));
  return path;
}

// Names and contents of the files in `dir`, to compare before and after a read.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    files[entry.path().filename().string()] = kiln_test::read_file(entry.path());
  }
  return files;
}

std::string open_error(const fs::path& path) {
  try {
    Worklog::open(path, OpenMode::read_only);
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("reading a closed worklog creates and changes no file", "[read_only]") {
  kiln_test::TempDir tmp("kiln-wl-ro");
  const fs::path path = closed_worklog(tmp.path());
  const auto before = snapshot(tmp.path());
  REQUIRE(before.size() == 1);
  {
    const Worklog log = Worklog::open(path, OpenMode::read_only);
    CHECK(log.attempts().size() == 1);
    CHECK(snapshot(tmp.path()).size() == 1);  // no -wal, no -shm while open either
  }
  CHECK(snapshot(tmp.path()) == before);
}

TEST_CASE("reading beside an active writer sees its commits and creates nothing", "[read_only]") {
  kiln_test::TempDir tmp("kiln-wl-ro-active");
  const fs::path path = closed_worklog(tmp.path());
  Worklog writer = Worklog::open(path);
  writer.add_attempt(make_attempt("softmax_cuda", "softmax_cuda__VEC4"));  // in the -wal, not checkpointed
  REQUIRE(fs::exists(path.string() + "-wal"));
  const auto names = [&] {
    std::set<std::string> out;
    for (const auto& [name, content] : snapshot(tmp.path())) out.insert(name);
    return out;
  };
  const auto before = names();
  {
    const Worklog reader = Worklog::open(path, OpenMode::read_only);
    CHECK(reader.attempts().size() == 2);
  }
  CHECK(names() == before);
}

TEST_CASE("a read-only file in a read-only directory can be read", "[read_only]") {
  kiln_test::TempDir tmp("kiln-wl-ro-perm");
  const fs::path dir = tmp / "records";
  fs::create_directories(dir);
  const fs::path path = closed_worklog(dir);
  fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
  const auto before = snapshot(dir);
  {
    const Worklog log = Worklog::open(path, OpenMode::read_only);
    CHECK(log.attempts().size() == 1);
    CHECK(log.sessions().empty());
  }
  CHECK(snapshot(dir) == before);
  fs::permissions(dir, fs::perms::owner_all);  // so that TempDir can remove it
}

TEST_CASE("an empty or foreign file is refused for reading and left untouched", "[read_only]") {
  kiln_test::TempDir tmp("kiln-wl-ro-foreign");
  const fs::path empty = tmp / "empty.sqlite";
  kiln_test::write_file(empty, "");
  CHECK_THAT(open_error(empty), ContainsSubstring(empty.string() + ": not a Kiln worklog"));
  CHECK(fs::file_size(empty) == 0);

  const fs::path text = tmp / "notes.txt";
  kiln_test::write_file(text, "not a database\n");
  CHECK_THAT(open_error(text), ContainsSubstring(text.string() + ": not a Kiln worklog"));
  CHECK(kiln_test::read_file(text) == "not a database\n");

  const fs::path foreign = tmp / "other.sqlite";
  {
    kiln::worklog::sqlite::Database db(foreign);
    db.exec("CREATE TABLE t (x); INSERT INTO t VALUES (1)", "make a foreign database");
  }
  const auto before = snapshot(tmp.path());
  CHECK_THAT(open_error(foreign), ContainsSubstring(foreign.string() + ": not a Kiln worklog"));
  CHECK(snapshot(tmp.path()) == before);

  CHECK_THAT(open_error(tmp / "missing.sqlite"), ContainsSubstring("no such worklog"));
  CHECK_FALSE(fs::exists(tmp / "missing.sqlite"));
}

TEST_CASE("a path with URI characters opens for reading", "[read_only]") {
  kiln_test::TempDir tmp("kiln-wl-ro-uri");
  const fs::path dir = tmp / "a?b#c%20d";
  fs::create_directories(dir);
  const fs::path path = closed_worklog(dir);
  CHECK(Worklog::open(path, OpenMode::read_only).attempts().size() == 1);
}
