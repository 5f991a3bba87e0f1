// published_report.hpp: the report of compare_published (published.hpp), as `ddpsim published`
// writes it to results/published/: a JSON document with the run's context block, and a Markdown
// page.
//
//   PublishedReport r = compare_published();
//   model::write_file_atomic("results/published/README.md", published_markdown(r));
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "simulator/fidelity/published.hpp"

namespace ddpsim::sim {

/// {"context", "source", "summary", "rows": [...], "not_predicted": [...]}.
nlohmann::json published_json(const PublishedReport& r);
/// A Markdown page: summary, one table per group, then the rows not predicted.
std::string published_markdown(const PublishedReport& r);

}  // namespace ddpsim::sim
