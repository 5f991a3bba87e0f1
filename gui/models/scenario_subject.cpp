#include "gui/models/scenario_subject.hpp"

#include <QFileInfo>
#include <QStringList>

#include "gui/models/price_book.hpp"

namespace ddpsim::gui {

namespace {

using json = nlohmann::json;

QString stringAt(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || !obj.at(key).is_string()) return {};
  return QString::fromStdString(obj.at(key).get<std::string>());
}

QString modelPart(const json& doc) {
  const json model = doc.contains("model") ? doc.at("model") : json();
  if (const QString p = stringAt(model, "preset"); !p.isEmpty()) return p;
  for (const char* key : {"hf_config", "file"}) {
    if (const QString f = stringAt(model, key); !f.isEmpty())
      return QFileInfo(f).completeBaseName();
  }
  if (model.is_object() && model.contains("mlp") && model.at("mlp").is_object() &&
      model.at("mlp").contains("widths") && model.at("mlp").at("widths").is_array()) {
    QStringList widths;
    for (const json& w : model.at("mlp").at("widths")) {
      widths << (w.is_string() ? QString::fromStdString(w.get<std::string>())
                               : QString::fromStdString(w.dump()));
    }
    if (widths.size() > 4) widths = widths.mid(0, 2) << QStringLiteral("...") << widths.last();
    return QStringLiteral("MLP ") + widths.join(QLatin1Char('-'));
  }
  return {};
}

QString systemPart(const json& doc) {
  if (const std::string preset = currentSystem(doc); !preset.empty())
    return QString::fromStdString(preset);
  const json hw = doc.contains("hardware") ? doc.at("hardware") : json();
  if (const QString n = stringAt(hw, "name"); !n.isEmpty()) return n;
  if (const QString p = stringAt(hw, "profile"); !p.isEmpty())
    return QFileInfo(p).completeBaseName();
  return {};
}

}  // namespace

QString scenarioModelName(const json& doc) { return doc.is_object() ? modelPart(doc) : QString(); }

QString scenarioSubject(const json& doc) {
  if (!doc.is_object()) return {};
  const QString model = modelPart(doc);
  const QString system = systemPart(doc);
  if (model.isEmpty()) return system;
  return system.isEmpty() ? model : model + QStringLiteral(" on ") + system;
}

}  // namespace ddpsim::gui
