//===- AutocastReportHtml.cpp - the autocast report as an HTML page -------===//
//
// The page (AutocastReport.html, embedded at build time) holds its script
// and styles; the report's JSON goes into a <script type="application/json">
// element, with every '<' written as \u003c (it occurs only inside JSON
// strings), so that nothing in it can close the element or open a comment.
//
//===----------------------------------------------------------------------===//

#include "amp/Transforms/Passes.h"

using namespace mlir;

static const char kReportPage[] =
#include "amp/Transforms/AutocastReportHtml.inc"
    ;

std::string mlir::amp::renderAutocastReportHtml(llvm::StringRef reportJson) {
  llvm::StringRef page(kReportPage);
  constexpr llvm::StringLiteral kSlot = "/*AMP_REPORT_JSON*/";
  size_t slot = page.find(kSlot);
  std::string html = page.take_front(slot).str();
  html.reserve(page.size() + reportJson.size());
  for (char c : reportJson) {
    if (c == '<')
      html += "\\u003c";
    else
      html += c;
  }
  html += page.drop_front(slot + kSlot.size()).str();
  return html;
}
