// The document side of ScenarioPanel (scenario_panel.hpp): what an edit writes into the
// ScenarioDocument (the setters and choosers), refresh() from the document into the fields, and
// the validation issue shown at its field. scenario_panel.cpp builds the form and binds its
// fields.
#include <QAbstractSpinBox>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSlider>
#include <QSpinBox>
#include <cmath>
#include <initializer_list>

#include "gui/app/scenario_panel.hpp"
#include "gui/models/preset_catalog.hpp"
#include "gui/models/scenario_document.hpp"
#include "gui/models/scenario_subject.hpp"

namespace ddpsim::gui {

namespace {

using json = nlohmann::json;

// What a field shows: its text, or a combo box's current text.
QString shownText(const QWidget* w) {
  if (const auto* box = qobject_cast<const QAbstractSpinBox*>(w)) return box->text();
  if (const auto* line = qobject_cast<const QLineEdit*>(w)) return line->text();
  if (const auto* combo = qobject_cast<const QComboBox*>(w)) return combo->currentText();
  return {};
}

}  // namespace

void ScenarioPanel::showModelFacts(const QString& name, std::int64_t params, std::int64_t seqLen) {
  m_modelLabel->setText(modelSummary(name, params, seqLen));
}

QString ScenarioPanel::modelText() const { return m_modelLabel->text(); }
QString ScenarioPanel::hardwareText() const { return m_hardwareFacts->text(); }

bool ScenarioPanel::revertTyping() {
  QWidget* focused = QApplication::focusWidget();
  if (focused == nullptr || !isAncestorOf(focused)) return false;
  const QString typed = shownText(focused);
  refresh();  // every field from the document, the focused one too
  return shownText(focused) != typed;
}

void ScenarioPanel::setNumber(const QString& pointer, double v, bool integer) {
  if (m_refreshing) return;
  if (integer) {
    m_doc->setValue(pointer, static_cast<std::int64_t>(std::llround(v)));
  } else {
    m_doc->setValue(pointer, v);
  }
}

void ScenarioPanel::setModelPreset(const QString& name) {
  if (m_refreshing || m_modelPreset->currentIndex() == 0) return;
  json model = m_doc->value("/model");
  // Keep seq_len and other keys beside the model source; replace the source itself.
  if (!model.is_object()) model = json::object();
  for (const char* k : {"preset", "file", "hf_config", "mlp", "layers"}) model.erase(k);
  model["preset"] = name.toStdString();
  m_doc->setValue("/model", model);
}

void ScenarioPanel::setMlpWidths() {
  if (m_refreshing) return;
  json widths = json::array();
  const QStringList parts =
      m_mlpWidths->text().split(QRegularExpression(QStringLiteral("[,\\s]+")), Qt::SkipEmptyParts);
  if (parts.isEmpty()) {
    // An emptied field undoes an MLP that does not validate: the last valid model comes back
    // (without this the only way out of "1024, abc" was another preset).
    if (!m_doc->isValid() && m_doc->value("/model").contains("mlp") &&
        m_lastValidModel.is_object()) {
      m_doc->setValue("/model", m_lastValidModel);
    }
    return;
  }
  for (const QString& p : parts) {
    bool ok = false;
    const qlonglong v = p.toLongLong(&ok);
    if (ok) {
      widths.push_back(v);
    } else {
      widths.push_back(p.toStdString());  // the validator names the bad element
    }
  }
  if (m_doc->value("/model/mlp/widths") == widths) return;
  m_doc->setValue("/model", json{{"mlp", {{"widths", widths}}}});
}

QString ScenarioPanel::relativeToScenario(const QString& path) const {
  if (m_doc->filePath().isEmpty()) return path;
  return QFileInfo(m_doc->filePath()).absoluteDir().relativeFilePath(path);
}

void ScenarioPanel::chooseHfConfig() {
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Hugging Face config.json"), {}, tr("JSON (*.json)"));
  if (path.isEmpty()) return;
  m_doc->setValue("/model", json{{"hf_config", relativeToScenario(path).toStdString()}});
}

void ScenarioPanel::chooseProfile() {
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Calibration profile"), {}, tr("JSON (*.json)"));
  if (path.isEmpty()) return;
  m_doc->setValue("/hardware", json{{"profile", relativeToScenario(path).toStdString()}});
}

void ScenarioPanel::setLrRule() {
  if (m_refreshing) return;
  if (m_lrRule->currentIndex() == 0) {
    m_doc->removeValue("/training/lr");
    return;
  }
  json lr = m_doc->value("/training/lr");
  if (!lr.is_object()) {
    lr = json{{"base", m_lrBase->value()}, {"base_batch", m_lrBaseBatch->value()}};
  }
  lr["scaling"] = m_lrRule->currentText().toStdString();
  m_doc->setValue("/training/lr", lr);
}

void ScenarioPanel::setTarget() {
  if (m_refreshing) return;
  if (!m_target->isChecked()) {
    m_doc->removeValue("/training/target");
    return;
  }
  m_doc->setValue(
      "/training/target",
      json{{"critical_batch", {{"b_noise", m_bNoise->value()}, {"s_min", m_sMin->value()}}}});
}

void ScenarioPanel::setOrRemove(const QString& pointer, double v) {
  if (m_refreshing) return;
  if (v != 0) {
    setNumber(pointer, v, false);
    return;
  }
  removeWithEmptyParent(pointer);
}

void ScenarioPanel::removeWithEmptyParent(const QString& pointer) {
  m_doc->removeValue(pointer);
  const QString parent = pointer.left(pointer.lastIndexOf(QLatin1Char('/')));
  if (!parent.isEmpty() && m_doc->value(parent).is_object() && m_doc->value(parent).empty())
    m_doc->removeValue(parent);
}

void ScenarioPanel::resetOptionalFields() {
  m_prices.clear();
  const bool was = m_refreshing;
  m_refreshing = true;  // not edits: nothing is written into the document
  m_lrBase->setValue(kDefaultLrBase);
  m_lrBaseBatch->setValue(kDefaultLrBaseBatch);
  m_bNoise->setValue(kDefaultBNoise);
  m_sMin->setValue(kDefaultSMin);
  m_refreshing = was;
}

void ScenarioPanel::refresh() {
  m_refreshing = true;
  const json& d = m_doc->json();
  if (m_doc->isValid() && d.contains("model")) m_lastValidModel = d.at("model");
  const auto at = [&](const char* p) {
    const json::json_pointer ptr(p);
    return d.contains(ptr) ? d.at(ptr) : json();
  };
  const auto setCombo = [](QComboBox* c, const json& v, int fallback) {
    const int i = v.is_string() ? c->findText(QString::fromStdString(v.get<std::string>())) : -1;
    c->setCurrentIndex(i >= 0 ? i : fallback);
  };
  const auto intOr = [](const json& v, int fallback) {
    return v.is_number() ? static_cast<int>(v.get<double>()) : fallback;
  };

  // The model by name and size, never its JSON (the buyer's review, defect 15).
  const json preset = at("/model/preset");
  if (const ModelFacts* m = preset.is_string() ? modelFacts(preset.get<std::string>()) : nullptr) {
    const json seq = at("/model/seq_len");
    m_modelLabel->setText(
        modelSummary(QString::fromStdString(m->name), m->params,
                     seq.is_number_integer() ? seq.get<std::int64_t>() : m->seqLen));
  } else {
    const QString name = scenarioModelName(d);
    m_modelLabel->setText(name.isEmpty() ? tr("(none)") : name);
  }
  setCombo(m_modelPreset, at("/model/preset"), 0);
  m_hfConfig->setText(at("/model/hf_config").is_string()
                          ? QString::fromStdString(at("/model/hf_config").get<std::string>())
                          : QString());
  QStringList widths;
  if (at("/model/mlp/widths").is_array()) {
    for (const json& w : at("/model/mlp/widths")) {
      widths << (w.is_string() ? QString::fromStdString(w.get<std::string>())
                               : QString::fromStdString(w.dump()));
    }
  }
  m_mlpWidths->setText(widths.join(QStringLiteral(", ")));
  // The system: /hardware/preset, or the first plan.hardware entry of a file without /hardware.
  setCombo(m_hardwarePreset, json(currentSystem(d)), 0);
  const SystemFacts* system = systemFacts(currentSystem(d));
  m_hardwareFacts->setText(system ? systemSummary(*system) : QString());
  m_hardwareFacts->setVisible(system != nullptr);
  m_profile->setText(at("/hardware/profile").is_string()
                         ? QString::fromStdString(at("/hardware/profile").get<std::string>())
                         : QString());
  m_gpus->setValue(intOr(at("/cluster/gpus"), 0));
  m_gpusPerNode->setValue(intOr(at("/cluster/gpus_per_node"), 0));
  setCombo(m_strategy, at("/parallelism/strategy"), 0);
  const json cap = at("/parallelism/bucket_cap_mb");
  m_bucketCap->setValue(cap.is_number() ? static_cast<int>(std::lround(cap.get<double>())) : 25);
  m_bucketLabel->setText(cap.is_number() ? QStringLiteral("%1 MiB").arg(cap.get<double>())
                                         : tr("25 MiB (default)"));
  // bucket_cap_mb is DDP's Reducer's: the sharded strategies bucket by their own keys (the
  // review: under fsdp2 the slider moved and 25 and 220 MiB drew the same chart).
  const bool ddp = m_strategy->currentText() == QStringLiteral("ddp");
  m_bucketCap->setEnabled(ddp);
  if (!ddp) m_bucketLabel->setText(tr("DDP only (not read by %1)").arg(m_strategy->currentText()));
  m_accumulation->setValue(intOr(at("/training/grad_accumulation"), 1));
  const json hook = at("/parallelism/comm_hook");
  m_commHook->setCurrentText(hook.is_string() ? QString::fromStdString(hook.get<std::string>())
                                              : QStringLiteral("none"));
  setCombo(m_precision, at("/training/precision"), 0);
  setCombo(m_optimizer, at("/training/optimizer"), 2);
  m_perGpuBatch->setValue(intOr(at("/training/per_gpu_batch"), 0));
  const json lr = at("/training/lr");
  if (lr.is_object()) {
    const json s = lr.contains("scaling") ? lr.at("scaling") : json("linear");
    setCombo(m_lrRule, s, 1);
    if (lr.contains("base") && lr.at("base").is_number())
      m_lrBase->setValue(lr.at("base").get<double>());
    m_lrBaseBatch->setValue(intOr(lr.contains("base_batch") ? lr.at("base_batch") : json(), 0));
  } else {
    m_lrRule->setCurrentIndex(0);
  }
  const json target = at("/training/target/critical_batch");
  m_target->setChecked(target.is_object());
  if (target.is_object()) {
    if (target.contains("b_noise") && target.at("b_noise").is_number()) {
      m_bNoise->setValue(target.at("b_noise").get<double>());
    }
    if (target.contains("s_min") && target.at("s_min").is_number()) {
      m_sMin->setValue(target.at("s_min").get<double>());
    }
  }
  const auto numberOr0 = [&](const char* p) {
    const json v = at(p);
    return v.is_number() ? v.get<double>() : 0.0;
  };
  m_prices.record(d);  // an undo or another edit may bring a price back
  m_price->setValue(currentPrice(d).value_or(0.0));
  showPriceNote();
  const json overlap = at("/parallelism/overlap");
  m_overlap->setCheckState(overlap.is_boolean()
                               ? (overlap.get<bool>() ? Qt::Checked : Qt::Unchecked)
                               : Qt::PartiallyChecked);
  m_overlap->setText(overlap.is_boolean() ? tr("overlap communication with the backward")
                                          : tr("overlap communication (strategy default)"));
  // The mode's item; a K the list lacks gets its own ("every 3rd block").
  const json ckpt = at("/training/activation_checkpointing");
  const QString ckptText =
      ckpt.is_null() || ckpt == json(false) ? QString() : QString::fromStdString(ckpt.dump());
  int ckptIndex = m_checkpointing->findData(ckptText);
  if (ckptIndex < 0 && ckpt.is_object()) {
    m_checkpointing->addItem(QString::fromStdString(ckpt.dump()), ckptText);
    ckptIndex = m_checkpointing->count() - 1;
  }
  m_checkpointing->setCurrentIndex(std::max(ckptIndex, 0));
  const json compile = at("/training/compile");
  m_compile->setChecked(compile.is_boolean() && compile.get<bool>());
  m_minGpus->setValue(static_cast<int>(numberOr0("/plan/min_gpus")));
  m_deadline->setValue(numberOr0("/plan/deadline_hours"));
  m_budget->setValue(numberOr0("/plan/budget_usd"));
  setCombo(m_objective, at("/plan/objective"), 0);
  const bool fsdp2 = at("/parallelism/strategy") == json("fsdp2");
  for (QWidget* w :
       std::initializer_list<QWidget*>{m_fsdp2Shard, m_fsdp2Reshard, m_fsdp2ParamDtype,
                                       m_fsdp2ReduceDtype, m_fsdp2Sync, m_fsdp2Offload})
    w->setEnabled(fsdp2);
  m_fsdp2Shard->setValue(static_cast<int>(numberOr0("/parallelism/fsdp2/mesh/shard")));
  const json reshard = at("/parallelism/fsdp2/reshard_after_forward");
  m_fsdp2Reshard->setCurrentText(reshard.is_boolean()  ? (reshard.get<bool>() ? "true" : "false")
                                 : reshard.is_number() ? QString::fromStdString(reshard.dump())
                                                       : QStringLiteral("true"));
  setCombo(m_fsdp2ParamDtype, at("/parallelism/fsdp2/mixed_precision/param_dtype"), 0);
  setCombo(m_fsdp2ReduceDtype, at("/parallelism/fsdp2/mixed_precision/reduce_dtype"), 0);
  const json sync = at("/parallelism/fsdp2/requires_gradient_sync");
  m_fsdp2Sync->setChecked(!sync.is_boolean() || sync.get<bool>());
  m_fsdp2Offload->setValue(numberOr0("/parallelism/fsdp2/cpu_offload/host_memory_gbytes_per_s"));
  const bool reliability = at("/reliability").is_object();
  m_reliability->setChecked(reliability);
  for (QWidget* w : std::initializer_list<QWidget*>{m_nodeMtbf, m_restart, m_ckptWrite,
                                                    m_ckptAggregate, m_ckptFormat})
    w->setEnabled(reliability);
  m_nodeMtbf->setValue(numberOr0("/reliability/node_mtbf_hours"));
  m_restart->setValue(numberOr0("/reliability/restart_minutes"));
  m_ckptWrite->setValue(numberOr0("/reliability/checkpoint/write_gbytes_per_s_per_node"));
  m_ckptAggregate->setValue(numberOr0("/reliability/checkpoint/aggregate_write_gbytes_per_s"));
  setCombo(m_ckptFormat, at("/reliability/checkpoint/format"), 0);
  m_refreshing = false;
  markIssue();
}

void ScenarioPanel::markIssue() {
  for (QWidget* w : m_fields) {
    w->setStyleSheet({});
    w->setToolTip(w->property("ddpsimHelp").toString());
    w->setProperty("ddpsimError", QVariant());
  }
  if (m_doc->isValid()) {
    m_issue->clear();
    return;
  }
  const QString message = m_doc->issueMessage();
  m_issue->setText(message);
  const auto mark = [&message](QWidget* w) {
    w->setStyleSheet(QStringLiteral("border: 2px solid #c0392b;"));
    w->setToolTip(message);
    w->setProperty("ddpsimError", message);
  };
  const QString pointer = fieldPointerFor(m_doc->issuePointer());
  if (QWidget* w = m_fields.value(pointer)) mark(w);
  // "the cost objective needs pricing.gpu_hour_usd" is answered at the price field.
  if (message.contains(QLatin1String("gpu_hour_usd"))) mark(m_price);
}

void ScenarioPanel::markRefused(QSpinBox* box, const QString& text) {
  const QString pointer = box->property("ddpsimPointer").toString();
  const QString message = tr("%1: \"%2\" is not a whole number; the value stays %3")
                              .arg(pointer.isEmpty() ? box->objectName() : pointer, text)
                              .arg(box->value());
  box->setStyleSheet(QStringLiteral("border: 2px solid #c0392b;"));
  box->setToolTip(message);
  box->setProperty("ddpsimError", message);
  m_issue->setText(message);
  emit inputRefused(message);
}

}  // namespace ddpsim::gui
