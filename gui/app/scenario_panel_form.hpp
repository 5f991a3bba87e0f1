// scenario_panel_form.hpp: what the files that build ScenarioPanel's form groups share
// (scenario_panel.cpp, scenario_panel_plan.cpp): a titled group box with its form layout, and a
// widget given its object name (the name the tests find it by). Internal to gui/app.
#pragma once

#include <QFormLayout>
#include <QGroupBox>
#include <QString>

namespace ddpsim::gui::panel_form {

/// A group box titled `title` whose fields go into `form` (set here), growing with the panel.
inline QGroupBox* group(const QString& title, QFormLayout*& form) {
  auto* box = new QGroupBox(title);
  form = new QFormLayout(box);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  return box;
}

/// `w` with the object name `name`.
template <typename W>
W* named(W* w, const char* name) {
  w->setObjectName(QString::fromLatin1(name));
  return w;
}

}  // namespace ddpsim::gui::panel_form
