//===- Einsum.cpp - Einsum equations --------------------------------------===//

#include "amp/Dialect/Amp/Semantics/Einsum.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace mlir::amp::semantics;

std::string EinsumEquation::str() const {
  std::string text = llvm::join(inputs, ",");
  return text + "->" + output;
}

FailureOr<EinsumEquation>
mlir::amp::semantics::resolveEinsum(StringRef equationAttr,
                                    ArrayRef<int64_t> ranks, ErrorFn error) {
  std::string equation;
  for (char c : equationAttr)
    if (c != ' ')
      equation.push_back(c);
  for (char c : equation)
    if (!llvm::isAlpha(c) && !StringRef(",->.").contains(c))
      return error("einsum equation has the character 0x" +
                   llvm::utohexstr(static_cast<unsigned char>(c)) +
                   "; only letters, ',', '->' and '...' are allowed"),
             failure();
  StringRef eq(equation);
  auto [lhs, rhs] = eq.split("->");
  bool explicitOutput = eq.contains("->");
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (terms.size() != ranks.size())
    return error("einsum equation has " + Twine(terms.size()) +
                 " input terms for " + Twine(ranks.size()) + " operands"),
           failure();
  // Ellipsis dimensions: as many as the widest ellipsis needs.
  int64_t ellipsisRank = 0;
  for (auto [term, rank] : llvm::zip(terms, ranks)) {
    size_t at = term.find("...");
    int64_t letters = static_cast<int64_t>(term.size()) -
                      (at == StringRef::npos ? 0 : 3);
    if (letters > rank || (at == StringRef::npos && letters != rank) ||
        term.drop_front(at == StringRef::npos ? 0 : at + 3).contains('.') ||
        (at != StringRef::npos && term.take_front(at).contains('.')))
      return error("einsum term '" + term + "' does not match rank " +
                   Twine(rank)),
             failure();
    if (at != StringRef::npos)
      ellipsisRank = std::max(ellipsisRank, rank - letters);
  }
  std::string fresh;
  for (char c = 'A'; c <= 'z' &&
                     static_cast<int64_t>(fresh.size()) < ellipsisRank;
       ++c)
    if (llvm::isAlpha(c) && equation.find(c) == std::string::npos)
      fresh.push_back(c);
  if (static_cast<int64_t>(fresh.size()) < ellipsisRank)
    return error("einsum equation has more dimensions than letters"),
           failure();
  auto expand = [&](StringRef term, int64_t rank) {
    size_t at = term.find("...");
    if (at == StringRef::npos)
      return term.str();
    int64_t count = rank - static_cast<int64_t>(term.size() - 3);
    return (term.take_front(at) + StringRef(fresh).take_back(count) +
            term.drop_front(at + 3))
        .str();
  };
  EinsumEquation result;
  std::map<char, int> counts;
  for (auto [term, rank] : llvm::zip(terms, ranks)) {
    result.inputs.push_back(expand(term, rank));
    for (char c : term)
      if (c != '.')
        ++counts[c];
  }
  if (explicitOutput) {
    size_t at = rhs.find("...");
    result.output = expand(rhs, at == StringRef::npos
                                    ? static_cast<int64_t>(rhs.size())
                                    : static_cast<int64_t>(rhs.size()) - 3 +
                                          ellipsisRank);
    for (char c : result.output)
      if (!llvm::any_of(result.inputs, [&](const std::string &t) {
            return t.find(c) != std::string::npos;
          }))
        return error("einsum output index '" + Twine(c) +
                     "' does not appear in the inputs"),
               failure();
  } else {
    result.output = fresh;
    for (auto [c, n] : counts)
      if (n == 1)
        result.output.push_back(c);
  }
  return result;
}
