// scenario_panel.hpp: the form that edits a ScenarioDocument (built and bound in
// scenario_panel.cpp, its plan and failures groups in scenario_panel_plan.cpp; document to fields
// and back in scenario_panel_sync.cpp). Every field is bound to one JSON pointer; editing a
// field writes that value into the document (which revalidates), and a validation problem is
// shown at the field whose pointer is the longest prefix of the error's pointer (red frame, the
// validator's one-line message as tooltip) and under the form.
//
//   ScenarioPanel panel(&document);
//   panel.field("/training/per_gpu_batch");   // the QSpinBox bound to that key
#pragma once

#include <QMap>
#include <QWidget>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "gui/models/price_book.hpp"

class QComboBox;
class QSpinBox;
class QDoubleSpinBox;
class QSlider;
class QLineEdit;
class QLabel;
class QCheckBox;
class QGroupBox;

namespace ddpsim::gui {

class ScenarioDocument;

class ScenarioPanel : public QWidget {
  Q_OBJECT

 public:
  explicit ScenarioPanel(ScenarioDocument* document, QWidget* parent = nullptr);

  /// The largest GPU count of the sweep. Moving the slider is an edit: it writes the GPU counts
  /// the charts show as the scenario's sweep (/sweep/cluster.gpus), so the saved file sweeps
  /// what the window drew (issue 19 item 5); setMaxGpus only moves the slider.
  int maxGpus() const;
  void setMaxGpus(int gpus);
  /// The widget bound to exactly `pointer`, or null.
  QWidget* field(const QString& pointer) const;
  /// The registered pointer that is the longest prefix of `errorPointer` ("" if none).
  QString fieldPointerFor(const QString& errorPointer) const;
  /// The message under the form ("" when the document is valid).
  QString issueText() const;
  /// The fields of keys a document may leave out (base LR and its batch, B_noise, S_min) back
  /// to their defaults, and the prices known per system forgotten: called before another file
  /// is opened, so that enabling the LR rule or the target there does not carry the previous
  /// file's values over (issue 19 item 5). Edits within one document keep them (unticking and
  /// re-ticking the target keeps B_noise; switching the system back restores its price).
  void resetOptionalFields();
  /// The price per GPU-hour known for each system (hardware preset) in this document: switching
  /// the preset writes that system's price (issue 41 item 3).
  const PriceBook& prices() const { return m_prices; }
  /// Ctrl+Z with a field of the form focused (the window's undo asks first): puts the focused
  /// field back to the document's value when it shows typing not committed yet (a number before
  /// Enter) and returns true; false when no field of the form has the focus or it shows the
  /// document's value (the window then undoes the last edit).
  bool revertTyping();
  /// The model row from a prediction of the document: its name, parameters and tokens per
  /// sample (refresh() shows a preset's from its file; a model given otherwise, e.g. an HF
  /// config, is counted only once the document validates).
  void showModelFacts(const QString& name, std::int64_t params, std::int64_t seqLen);
  QString modelText() const;
  QString hardwareText() const;

 public slots:
  /// Re-reads every field from the document and re-marks the validation problem.
  void refresh();

 signals:
  /// The slider moved (by the user or setMaxGpus).
  void maxGpusChanged(int gpus);
  /// The user moved the slider: the window writes the sweep range into the document.
  void maxGpusEdited(int gpus);
  /// A typed value was refused (a decimal in a whole-number field): the message says which
  /// field, what was typed and that the value did not change.
  void inputRefused(const QString& message);

 private:
  // What the optional fields show before a document gives them (resetOptionalFields): the values
  // a new LR rule or target starts from.
  static constexpr double kDefaultLrBase = 0.1;
  static constexpr int kDefaultLrBaseBatch = 256;
  static constexpr double kDefaultBNoise = 1000;
  static constexpr double kDefaultSMin = 20000;

  void build();
  QGroupBox* buildModel();
  QGroupBox* buildHardware();
  QGroupBox* buildCluster();
  QGroupBox* buildParallelism();
  QGroupBox* buildFsdp2();
  QGroupBox* buildTraining();
  QGroupBox* buildPlan();
  QGroupBox* buildReliability();
  void bind(const QString& pointer, QWidget* w);
  void markIssue();
  void setNumber(const QString& pointer, double v, bool integer);
  void setModelPreset(const QString& name);
  void setHardwarePreset(const QString& name);
  /// The current system's price (0: none), kept in the price book for that system.
  void setPrice(double usd);
  void showPriceNote();
  /// A whole-number field whose refused decimals are shown at the field (issue 41 item 3).
  QSpinBox* integerField(const char* name);
  void markRefused(QSpinBox* box, const QString& text);
  void setMlpWidths();
  void chooseHfConfig();
  void chooseProfile();
  void setLrRule();
  void setTarget();
  /// Writes `v` at `pointer`, or removes the key when `v` is 0 (the field's "none" value), and an
  /// object left empty by that.
  void setOrRemove(const QString& pointer, double v);
  /// Removes `pointer` and its parent object when that is left empty ("parallelism": {}).
  void removeWithEmptyParent(const QString& pointer);
  QString relativeToScenario(const QString& path) const;

  ScenarioDocument* m_doc;
  QMap<QString, QWidget*> m_fields;
  bool m_refreshing = false;
  bool m_settingMaxGpus = false;  ///< setMaxGpus is moving the slider (not an edit)

  QLabel* m_modelLabel = nullptr;
  QLabel* m_hardwareFacts = nullptr;
  QComboBox* m_modelPreset = nullptr;
  QLineEdit* m_hfConfig = nullptr;
  QLineEdit* m_mlpWidths = nullptr;
  /// The document's model the last time the document was valid: clearing the MLP widths field
  /// of an MLP that does not validate restores it (issue 19 item 4).
  nlohmann::json m_lastValidModel;
  QComboBox* m_hardwarePreset = nullptr;
  QLineEdit* m_profile = nullptr;
  QSpinBox* m_gpus = nullptr;
  QSpinBox* m_gpusPerNode = nullptr;
  QSlider* m_maxGpus = nullptr;
  QLabel* m_maxGpusLabel = nullptr;
  QSpinBox* m_minGpus = nullptr;  ///< /plan/min_gpus; 0: none
  QComboBox* m_strategy = nullptr;
  QSlider* m_bucketCap = nullptr;
  QLabel* m_bucketLabel = nullptr;
  QSpinBox* m_accumulation = nullptr;
  QComboBox* m_commHook = nullptr;
  QComboBox* m_precision = nullptr;
  QComboBox* m_optimizer = nullptr;
  QSpinBox* m_perGpuBatch = nullptr;
  QComboBox* m_lrRule = nullptr;
  QDoubleSpinBox* m_lrBase = nullptr;
  QSpinBox* m_lrBaseBatch = nullptr;
  QCheckBox* m_target = nullptr;
  QDoubleSpinBox* m_bNoise = nullptr;
  QDoubleSpinBox* m_sMin = nullptr;
  QDoubleSpinBox* m_price = nullptr;  ///< the current system's price (price_book.hpp)
  QLabel* m_priceNote = nullptr;
  PriceBook m_prices;
  QComboBox* m_checkpointing = nullptr;
  QCheckBox* m_compile =
      nullptr;  ///< /training/compile  ///< item data: the key's JSON (null: left out)
  QCheckBox* m_overlap = nullptr;
  QDoubleSpinBox* m_deadline = nullptr;
  QDoubleSpinBox* m_budget = nullptr;
  QComboBox* m_objective = nullptr;
  // FSDP2's knobs (parallelism.fsdp2, simulator/prediction/fsdp2.hpp), enabled with strategy fsdp2.
  QSpinBox* m_fsdp2Shard = nullptr;
  QComboBox* m_fsdp2Reshard = nullptr;
  QComboBox* m_fsdp2ParamDtype = nullptr;
  QComboBox* m_fsdp2ReduceDtype = nullptr;
  QCheckBox* m_fsdp2Sync = nullptr;
  QDoubleSpinBox* m_fsdp2Offload = nullptr;  ///< host memory GB/s; 0: no CPU offload
  // Failures and checkpoints (the scenario's "reliability" section,
  // simulator/prediction/goodput.hpp).
  QCheckBox* m_reliability = nullptr;
  QDoubleSpinBox* m_nodeMtbf = nullptr;
  QDoubleSpinBox* m_restart = nullptr;
  QDoubleSpinBox* m_ckptWrite = nullptr;
  QDoubleSpinBox* m_ckptAggregate = nullptr;
  QComboBox* m_ckptFormat = nullptr;
  QLabel* m_issue = nullptr;
};

}  // namespace ddpsim::gui
