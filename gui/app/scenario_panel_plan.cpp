// The planner's groups of ScenarioPanel (scenario_panel.hpp): "Plan: deadline, budget,
// objective" (/plan) and "Failures and checkpoints" (/reliability), the inputs of the
// Recommendation tab and of Time & cost. scenario_panel.cpp builds the other groups and lays the
// form out.
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>

#include "gui/app/scenario_panel.hpp"
#include "gui/app/scenario_panel_form.hpp"
#include "gui/models/scenario_document.hpp"

namespace ddpsim::gui {

namespace {

using json = nlohmann::json;
using panel_form::group;
using panel_form::named;

}  // namespace

// The planner's constraints and objective (the Recommendation tab and Time & cost).
QGroupBox* ScenarioPanel::buildPlan() {
  QFormLayout* f = nullptr;
  auto* planBox = group(tr("Plan: deadline, budget, objective"), f);
  m_deadline = named(new QDoubleSpinBox, "deadlineHours");
  m_deadline->setRange(0, 1e7);
  m_deadline->setDecimals(1);
  m_deadline->setSpecialValueText(tr("(no deadline)"));
  f->addRow(tr("deadline (hours)"), m_deadline);
  m_budget = named(new QDoubleSpinBox, "budgetUsd");
  m_budget->setRange(0, 1e12);
  m_budget->setDecimals(2);
  m_budget->setSpecialValueText(tr("(no budget)"));
  f->addRow(tr("budget (USD)"), m_budget);
  m_objective = named(new QComboBox, "objective");
  m_objective->addItems({"time", "cost", "gpu_hours"});
  f->addRow(tr("minimise"), m_objective);
  bind("/plan/deadline_hours", m_deadline);
  bind("/plan/budget_usd", m_budget);
  bind("/plan/objective", m_objective);
  connect(m_deadline, &QDoubleSpinBox::valueChanged, this,
          [this](double v) { setOrRemove("/plan/deadline_hours", v); });
  connect(m_budget, &QDoubleSpinBox::valueChanged, this,
          [this](double v) { setOrRemove("/plan/budget_usd", v); });
  connect(m_objective, &QComboBox::textActivated, this, [this](const QString& s) {
    if (m_refreshing) return;
    if (s == QLatin1String("time") && !m_doc->value("/plan/objective").is_string()) return;
    m_doc->setValue("/plan/objective", s.toStdString());
  });
  return planBox;
}

// Failures and checkpoints: job MTBF, checkpoint and restart costs, ETTR (Time & cost).
QGroupBox* ScenarioPanel::buildReliability() {
  QFormLayout* f = nullptr;
  auto* relBox = group(tr("Failures and checkpoints"), f);
  m_reliability = named(new QCheckBox(tr("count failures and checkpoints (ETTR)")), "reliability");
  f->addRow(m_reliability);
  m_nodeMtbf = named(new QDoubleSpinBox, "nodeMtbfHours");
  m_nodeMtbf->setRange(0, 1e9);
  m_nodeMtbf->setDecimals(1);
  m_nodeMtbf->setSpecialValueText(tr("(Llama 3: 6,335)"));
  f->addRow(tr("node MTBF (hours)"), m_nodeMtbf);
  m_restart = named(new QDoubleSpinBox, "restartMinutes");
  m_restart->setRange(0, 1e6);
  m_restart->setDecimals(1);
  f->addRow(tr("restart (minutes)"), m_restart);
  m_ckptWrite = named(new QDoubleSpinBox, "checkpointWrite");
  m_ckptWrite->setRange(0.001, 1e6);
  m_ckptWrite->setDecimals(3);
  f->addRow(tr("checkpoint write (GB/s per node)"), m_ckptWrite);
  m_ckptAggregate = named(new QDoubleSpinBox, "checkpointAggregate");
  m_ckptAggregate->setRange(0, 1e9);
  m_ckptAggregate->setDecimals(1);
  m_ckptAggregate->setSpecialValueText(tr("(no shared limit)"));
  f->addRow(tr("storage total (GB/s)"), m_ckptAggregate);
  m_ckptFormat = named(new QComboBox, "checkpointFormat");
  m_ckptFormat->addItems({"dcp", "rank0"});
  f->addRow(tr("checkpoint format"), m_ckptFormat);
  bind("/reliability", m_reliability);
  bind("/reliability/node_mtbf_hours", m_nodeMtbf);
  bind("/reliability/restart_minutes", m_restart);
  bind("/reliability/checkpoint/write_gbytes_per_s_per_node", m_ckptWrite);
  bind("/reliability/checkpoint/aggregate_write_gbytes_per_s", m_ckptAggregate);
  bind("/reliability/checkpoint/format", m_ckptFormat);
  connect(m_reliability, &QCheckBox::toggled, this, [this](bool on) {
    if (m_refreshing) return;
    if (!on) {
      m_doc->removeValue("/reliability");
      return;
    }
    // Starting values the fields show (both keys are required): a 10-minute restart and 2 GB/s
    // of storage per node; the MTBF stays Llama 3's default until one is typed.
    m_doc->setValue("/reliability", json{{"restart_minutes", 10},
                                         {"checkpoint", {{"write_gbytes_per_s_per_node", 2}}}});
  });
  connect(m_nodeMtbf, &QDoubleSpinBox::valueChanged, this,
          [this](double v) { setOrRemove("/reliability/node_mtbf_hours", v); });
  connect(m_restart, &QDoubleSpinBox::valueChanged, this,
          [this](double v) { setNumber("/reliability/restart_minutes", v, false); });
  connect(m_ckptWrite, &QDoubleSpinBox::valueChanged, this, [this](double v) {
    setNumber("/reliability/checkpoint/write_gbytes_per_s_per_node", v, false);
  });
  connect(m_ckptAggregate, &QDoubleSpinBox::valueChanged, this, [this](double v) {
    setOrRemove("/reliability/checkpoint/aggregate_write_gbytes_per_s", v);
  });
  connect(m_ckptFormat, &QComboBox::textActivated, this, [this](const QString& s) {
    if (m_refreshing) return;
    if (s == QLatin1String("dcp") && !m_doc->value("/reliability/checkpoint/format").is_string())
      return;
    m_doc->setValue("/reliability/checkpoint/format", s.toStdString());
  });
  return relBox;
}

}  // namespace ddpsim::gui
