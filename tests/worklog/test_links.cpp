// Links between attempts: valid links, and every way a link can be wrong.
#include "kiln/worklog/worklog.hpp"
#include "kiln_catch.hpp"
#include "temp_dir.hpp"
#include "worklog_helpers.hpp"

using namespace kiln::worklog;
using kiln_test::ContainsSubstring;
using worklog_test::make_attempt;

TEST_CASE("links connect existing attempts and read back from both ends") {
  kiln_test::TempDir dir("kiln-worklog");
  Worklog log = Worklog::open(dir / "w.db");
  const std::int64_t a = log.add_attempt(make_attempt("k", "k__A1"));
  const std::int64_t b = log.add_attempt(make_attempt("k", "k__A2"));
  const std::int64_t c = log.add_attempt(make_attempt("k", "k__A3"));

  const std::int64_t ab = log.add_link(a, b, LinkKind::enables, "wider vectors need more threads");
  const std::int64_t ca = log.add_link(c, a, LinkKind::contradicts);
  const std::int64_t ab2 = log.add_link(a, b, LinkKind::supports);  // another kind: allowed

  const std::vector<Link> of_a = log.links_of(a);
  REQUIRE(of_a.size() == 3);
  CHECK(of_a[0].id == ab);
  CHECK(of_a[0].from_attempt == a);
  CHECK(of_a[0].to_attempt == b);
  CHECK(of_a[0].kind == LinkKind::enables);
  CHECK(of_a[0].note == "wider vectors need more threads");
  CHECK_FALSE(of_a[0].created_at.empty());
  CHECK(of_a[1].id == ca);
  CHECK(of_a[1].kind == LinkKind::contradicts);
  CHECK(of_a[1].note.empty());
  CHECK(of_a[2].id == ab2);

  const std::vector<Link> of_b = log.links_of(b);
  REQUIRE(of_b.size() == 2);
  CHECK(of_b[0].id == ab);
  CHECK(of_b[1].id == ab2);
  CHECK(log.links_of(c).size() == 1);
}

TEST_CASE("a link to an unknown attempt, to itself, twice, or of an unknown kind is refused") {
  kiln_test::TempDir dir("kiln-worklog");
  Worklog log = Worklog::open(dir / "w.db");
  const std::int64_t a = log.add_attempt(make_attempt("k", "k__A1"));
  const std::int64_t b = log.add_attempt(make_attempt("k", "k__A2"));
  const std::string prefix = log.path() + ": ";

  REQUIRE_THROWS_WITH(log.add_link(a, 99, LinkKind::blocks),
                      prefix + "cannot link attempt 1 to attempt 99: no attempt 99");
  REQUIRE_THROWS_WITH(log.add_link(77, b, LinkKind::blocks),
                      prefix + "cannot link attempt 77 to attempt 2: no attempt 77");
  REQUIRE_THROWS_WITH(log.add_link(a, a, LinkKind::refines),
                      prefix + "cannot link attempt 1 to attempt 1: it is the same attempt");
  log.add_link(a, b, LinkKind::similar);
  REQUIRE_THROWS_WITH(log.add_link(a, b, LinkKind::similar),
                      prefix + "cannot link attempt 1 to attempt 2: the link 'similar' exists "
                               "already");
  REQUIRE_THROWS_WITH(log.add_link(a, b, static_cast<LinkKind>(17)), "invalid link kind value 17");
  REQUIRE_THROWS_WITH(parse_link_kind("causes"),
                      "unknown link kind 'causes' (expected enables, blocks, similar, "
                      "contradicts, supports or refines)");
  CHECK(log.links_of(a).size() == 1);
}

TEST_CASE("the schema itself rejects links the API would refuse") {
  kiln_test::TempDir dir("kiln-worklog");
  Worklog log = Worklog::open(dir / "w.db");
  const std::int64_t a = log.add_attempt(make_attempt("k", "k__A1"));
  const std::int64_t b = log.add_attempt(make_attempt("k", "k__A2"));
  const auto insert = [&](std::int64_t from, std::int64_t to, const char* kind) {
    kiln::worklog::sqlite::Statement s = log.database().prepare(
        "INSERT INTO links (from_attempt, to_attempt, kind) VALUES (?, ?, ?)", "insert a raw link");
    s.bind(1, from).bind(2, to).bind(3, kind).run();
  };
  REQUIRE_THROWS_WITH(insert(a, b, "causes"), ContainsSubstring("CHECK constraint failed"));
  REQUIRE_THROWS_WITH(insert(a, a, "similar"), ContainsSubstring("CHECK constraint failed"));
  REQUIRE_THROWS_WITH(insert(a, 99, "similar"), ContainsSubstring("FOREIGN KEY constraint failed"));
  insert(a, b, "similar");
  REQUIRE_THROWS_WITH(insert(a, b, "similar"), ContainsSubstring("UNIQUE constraint failed"));
}
