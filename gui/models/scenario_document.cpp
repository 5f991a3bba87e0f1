#include "gui/models/scenario_document.hpp"

#include <QDir>
#include <QFileInfo>
#include <filesystem>

#include "model/atomic_file.hpp"
#include "model/error.hpp"
#include "model/scenario/scenario.hpp"
#include "model/schema.hpp"

namespace ddpsim::gui {

namespace {

void diffInto(const nlohmann::json& a, const nlohmann::json& b, const std::string& at,
              std::vector<JsonDifference>& out) {
  if (a.is_object() && b.is_object()) {
    // Both key sets, in order (nlohmann's object is a std::map: already sorted).
    auto ia = a.begin();
    auto ib = b.begin();
    while (ia != a.end() || ib != b.end()) {
      if (ib == b.end() || (ia != a.end() && ia.key() < ib.key())) {
        out.push_back({at + "/" + model::escape_pointer_token(ia.key()), ia->dump(), "(absent)"});
        ++ia;
      } else if (ia == a.end() || ib.key() < ia.key()) {
        out.push_back({at + "/" + model::escape_pointer_token(ib.key()), "(absent)", ib->dump()});
        ++ib;
      } else {
        diffInto(*ia, *ib, at + "/" + model::escape_pointer_token(ia.key()), out);
        ++ia;
        ++ib;
      }
    }
    return;
  }
  if (a != b) out.push_back({at, a.dump(), b.dump()});
}

}  // namespace

std::vector<JsonDifference> jsonDiff(const nlohmann::json& left, const nlohmann::json& right) {
  std::vector<JsonDifference> out;
  diffInto(left, right, "", out);
  return out;
}

ScenarioDocument::ScenarioDocument(QObject* parent) : QObject(parent) { revalidate(); }

bool ScenarioDocument::load(const QString& path, QString* error) {
  nlohmann::json doc;
  try {
    doc = model::read_json_file(path.toStdString());
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  setDocument(doc, path);
  return true;
}

bool ScenarioDocument::save(const QString& path, QString* error) {
  try {
    model::write_file_atomic(path.toStdString(), m_doc.dump(2) + "\n");
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  if (m_path != path) {
    m_path = path;
    revalidate();  // relative references now resolve from the new folder
  }
  m_saved = m_doc;
  m_modified = false;
  emit changed();
  return true;
}

void ScenarioDocument::setDocument(const nlohmann::json& doc, const QString& path) {
  m_doc = doc;
  m_saved = doc;
  m_path = path;
  m_modified = false;
  m_undo.clear();
  m_redo.clear();
  m_lastEditPointer.clear();
  revalidate();
  emit changed();
}

std::string ScenarioDocument::anchorPath() const {
  if (!m_path.isEmpty()) return QFileInfo(m_path).absoluteFilePath().toStdString();
  return QDir::current().absoluteFilePath(QStringLiteral("untitled.json")).toStdString();
}

nlohmann::json ScenarioDocument::value(const QString& pointer) const {
  const nlohmann::json::json_pointer p(pointer.toStdString());
  return m_doc.contains(p) ? m_doc.at(p) : nlohmann::json();
}

void ScenarioDocument::setValue(const QString& pointer, const nlohmann::json& value) {
  const nlohmann::json::json_pointer p(pointer.toStdString());
  if (m_doc.contains(p) && m_doc.at(p) == value) return;
  recordUndo(pointer.toStdString());
  m_doc[p] = value;
  m_modified = m_doc != m_saved;
  revalidate();
  emit changed();
}

void ScenarioDocument::setValues(const std::vector<std::pair<QString, nlohmann::json>>& values) {
  nlohmann::json next = m_doc;
  for (const auto& [pointer, value] : values)
    next[nlohmann::json::json_pointer(pointer.toStdString())] = value;
  replace(next);
}

void ScenarioDocument::replace(const nlohmann::json& next, const QString& mergeKey) {
  if (next == m_doc) return;
  // An empty key is never merged; a key is never a JSON pointer, so never merged with one key's
  // setValue either.
  recordUndo(mergeKey.isEmpty() ? std::string() : "#" + mergeKey.toStdString());
  m_doc = next;
  m_modified = m_doc != m_saved;
  revalidate();
  emit changed();
}

void ScenarioDocument::removeValue(const QString& pointer) {
  const nlohmann::json::json_pointer p(pointer.toStdString());
  if (!m_doc.contains(p)) return;
  recordUndo(pointer.toStdString());
  nlohmann::json& parent = m_doc.at(p.parent_pointer());
  if (parent.is_object()) {
    parent.erase(p.back());
  } else if (parent.is_array()) {
    parent.erase(static_cast<std::size_t>(std::stoul(p.back())));
  }
  m_modified = m_doc != m_saved;
  revalidate();
  emit changed();
}

void ScenarioDocument::recordUndo(const std::string& pointer) {
  constexpr std::size_t kMaxUndo = 200;
  const bool merge = !m_undo.empty() && !pointer.empty() && pointer == m_lastEditPointer &&
                     m_lastEdit.isValid() && m_lastEdit.elapsed() < m_coalesceMs;
  if (!merge) {
    m_undo.push_back(m_doc);
    if (m_undo.size() > kMaxUndo) m_undo.erase(m_undo.begin());
  }
  m_redo.clear();
  m_lastEditPointer = pointer;
  m_lastEdit.start();
}

bool ScenarioDocument::travel(std::vector<nlohmann::json>& from, std::vector<nlohmann::json>& to) {
  if (from.empty()) return false;
  to.push_back(m_doc);
  m_doc = std::move(from.back());
  from.pop_back();
  m_modified = m_doc != m_saved;
  m_lastEditPointer.clear();  // the next edit starts a new step
  revalidate();
  emit changed();
  return true;
}

bool ScenarioDocument::undo() { return travel(m_undo, m_redo); }

bool ScenarioDocument::redo() { return travel(m_redo, m_undo); }

void ScenarioDocument::revalidate() {
  m_valid = false;
  m_issuePointer.clear();
  m_issueMessage.clear();
  try {
    (void)model::parse_scenario(m_doc, anchorPath());
    m_valid = true;
  } catch (const InputError& e) {
    m_issuePointer = QString::fromStdString(e.pointer());
    m_issueMessage = QString::fromStdString(e.what());
  } catch (const std::exception& e) {
    m_issueMessage = QString::fromStdString(e.what());
  }
}

}  // namespace ddpsim::gui
