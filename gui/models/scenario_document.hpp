// scenario_document.hpp: the scenario being edited, held as its JSON document.
//
// The document is the source of truth: widgets write values at JSON pointers, the document is
// validated by the project's own parser (model::parse_scenario, the same code the CLI runs), and
// the one-line ddpsim::InputError message is kept with its JSON pointer so the window can mark
// the field. Load and save read and write the files the CLI reads; saving an unedited document
// gives the same JSON value that was loaded (keys and values untouched, 2-space indent).
//
//   ScenarioDocument doc;
//   QString err;
//   if (!doc.load("scenarios/default.json", &err)) ...;
//   doc.setValue("/parallelism/bucket_cap_mb", 50);   // emits changed(), revalidates
//   if (!doc.isValid()) qDebug() << doc.issuePointer() << doc.issueMessage();
//   doc.undo();                                        // back to the loaded value
//
// Undo/redo (issue 19 item 4): every setValue/removeValue is one step, except that edits of the
// same key less than coalesceMs() apart merge into one (a slider drag is one step, not twenty).
// isModified() compares with the document as last loaded or saved, so undoing back to it clears
// the window's '*'.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace ddpsim::gui {

/// One changed leaf between two documents (see jsonDiff).
struct JsonDifference {
  std::string pointer;  ///< RFC 6901 pointer of the leaf ("/cluster/gpus")
  std::string left;     ///< the value in the first document, compact JSON; "(absent)" if none
  std::string right;
};

/// Leaves that differ between `left` and `right` (objects are walked key by key; arrays and
/// scalars compare as whole values), in key order. Equal documents give an empty list.
std::vector<JsonDifference> jsonDiff(const nlohmann::json& left, const nlohmann::json& right);

class ScenarioDocument : public QObject {
  Q_OBJECT

 public:
  explicit ScenarioDocument(QObject* parent = nullptr);

  /// Reads `path` (strict JSON). On a syntax or I/O error returns false with the one-line
  /// message in *error and keeps the previous document. A document that parses but does not
  /// validate is loaded (so the fields can show it) and isValid() is false.
  bool load(const QString& path, QString* error);
  /// Writes the document atomically (temp file + rename), 2-space indented with a final newline.
  bool save(const QString& path, QString* error);
  /// Replaces the document; `path` names it in messages and anchors relative file references.
  void setDocument(const nlohmann::json& doc, const QString& path);

  const nlohmann::json& json() const { return m_doc; }
  QString filePath() const { return m_path; }
  /// The path used for validation messages and relative references (filePath() or a name in
  /// the working directory for an unsaved document).
  std::string anchorPath() const;

  /// The value at `pointer`, or null when absent.
  nlohmann::json value(const QString& pointer) const;
  /// Sets the value at `pointer`, creating objects on the way; emits changed() when it differs.
  void setValue(const QString& pointer, const nlohmann::json& value);
  /// Sets several values as ONE edit (one undo step, one changed()): loading a planner point.
  void setValues(const std::vector<std::pair<QString, nlohmann::json>>& values);
  /// Replaces the whole document as ONE edit (one undo step, one changed()), for edits that set
  /// some keys and remove others together (switching the system and its price). Replacements
  /// with the same non-empty `mergeKey` less than coalesceMs() apart merge like one key's edits.
  void replace(const nlohmann::json& next, const QString& mergeKey = {});
  /// Removes the key at `pointer` if present; emits changed() when something was removed.
  void removeValue(const QString& pointer);

  /// Steps back over the latest edit (or merged run of edits); false when there is none.
  bool undo();
  /// Re-applies the latest undone edit; false when there is none (any new edit clears them).
  bool redo();
  bool canUndo() const { return !m_undo.empty(); }
  bool canRedo() const { return !m_redo.empty(); }
  /// Edits of one key closer together than this merge into one undo step (default 800 ms; 0:
  /// every edit is its own step).
  void setCoalesceMs(int ms) { m_coalesceMs = ms; }
  int coalesceMs() const { return m_coalesceMs; }

  bool isValid() const { return m_valid; }
  /// The document differs from the one last loaded, set or saved.
  bool isModified() const { return m_modified; }
  /// JSON pointer of the validation problem ("" when valid or when the error names none).
  QString issuePointer() const { return m_issuePointer; }
  /// The validator's one-line message ("FILE: /pointer: expected ..., got ...").
  QString issueMessage() const { return m_issueMessage; }

 signals:
  /// The document changed (after an edit, a load or setDocument); validation is already done.
  void changed();

 private:
  void revalidate();
  /// Records the document before an edit of `pointer` (see the undo rules above).
  void recordUndo(const std::string& pointer);
  /// Undo (from m_undo to m_redo) or redo (the other way): the current document goes onto `to`,
  /// the latest of `from` becomes the document. False when `from` is empty.
  bool travel(std::vector<nlohmann::json>& from, std::vector<nlohmann::json>& to);

  nlohmann::json m_doc = nlohmann::json::object();
  nlohmann::json m_saved = nlohmann::json::object();  ///< as last loaded, set or saved
  std::vector<nlohmann::json> m_undo, m_redo;
  std::string m_lastEditPointer;
  QElapsedTimer m_lastEdit;
  int m_coalesceMs = 800;
  QString m_path;
  bool m_valid = false;
  bool m_modified = false;
  QString m_issuePointer;
  QString m_issueMessage;
};

}  // namespace ddpsim::gui
