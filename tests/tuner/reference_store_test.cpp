// The reference store (kiln/reference_store.hpp) on real files: entries round-trip their bytes,
// and what is not an entry of the key and size asked for is never taken for one.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "kiln/reference_store.hpp"
#include "kiln_catch.hpp"
#include "reference_store_dir.hpp"
#include "temp_dir.hpp"

namespace store = kiln::reference_store;

namespace {

std::size_t files_in(const std::filesystem::path& dir) {
  std::size_t count = 0;
  if (!std::filesystem::exists(dir)) return 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++count;
  return count;
}

}  // namespace

TEST_CASE("reference store: without a directory nothing is kept or read") {
  kiln_test::TempDir dir("kiln-store");
  ::unsetenv(store::kDirectoryVariable);
  store::store("topk rows=1", "abc");
  CHECK_FALSE(store::load("topk rows=1", 3));
  CHECK(files_in(dir.path()) == 0);
}

TEST_CASE("reference store: an entry gives back its bytes, binary ones included, for its key and size only") {
  kiln_test::TempDir dir("kiln-store");
  const kiln_test::ReferenceStoreDir using_it(dir / "refs");  // made when the first entry is stored
  const std::string bytes("a\nb\0c\n12", 8);
  store::store("nbody_tree bodies=plummer n=3 seed=5", bytes);
  REQUIRE(files_in(dir / "refs") == 1);
  const auto back = store::load("nbody_tree bodies=plummer n=3 seed=5", bytes.size());
  REQUIRE(back);
  CHECK(*back == bytes);
  CHECK_FALSE(store::load("nbody_tree bodies=plummer n=3 seed=5", bytes.size() + 1));
  CHECK_FALSE(store::load("nbody_tree bodies=plummer n=3 seed=6", bytes.size()));
  // Stored again, the entry is replaced whole.
  store::store("nbody_tree bodies=plummer n=3 seed=5", "xyz");
  CHECK(store::load("nbody_tree bodies=plummer n=3 seed=5", 3) == std::string("xyz"));
  CHECK(files_in(dir / "refs") == 1);  // no temporary file left behind
}

TEST_CASE("reference store: a file that is not the entry asked for is not read as one") {
  kiln_test::TempDir dir("kiln-store");
  const kiln_test::ReferenceStoreDir using_it(dir.path());
  const std::string key = "topk rows=2 n=9 k=1 largest normal seed=1";
  const std::filesystem::path entry = store::entry_path(dir.path(), key);
  store::store(key, "0123456789");
  std::string whole;
  {
    std::ifstream in(entry, std::ios::binary);
    whole.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto write = [&](const std::string& text) { std::ofstream(entry, std::ios::binary | std::ios::trunc) << text; };
  SECTION("cut short") { write(whole.substr(0, whole.size() - 3)); }
  SECTION("another key of the same length at its place") {
    std::string other = whole;
    other[5] = 'X';
    write(other);
  }
  SECTION("the right size, a wrong trailer") {
    std::string other = whole;
    other.back() = '9';
    write(other);
  }
  SECTION("far too large") { write(whole + std::string(1 << 20, 'z')); }
  SECTION("a directory") {
    std::filesystem::remove(entry);
    std::filesystem::create_directory(entry);
  }
  CHECK_FALSE(store::load(key, 10));
}

TEST_CASE("reference store: a directory that cannot be made, or a key with a line break, keeps nothing") {
  kiln_test::TempDir dir("kiln-store");
  std::ofstream(dir / "file") << "not a directory";
  {
    const kiln_test::ReferenceStoreDir using_it(dir / "file" / "refs");
    store::store("softmax rows=1", "abc");
    CHECK_FALSE(store::load("softmax rows=1", 3));
  }
  const kiln_test::ReferenceStoreDir using_it(dir / "refs");
  store::store("two\nlines", "abc");
  CHECK(files_in(dir / "refs") == 0);
  CHECK_FALSE(store::load("two\nlines", 3));
}
