#include "gui/app/systems_picker.hpp"

#include <QHeaderView>
#include <algorithm>

#include "gui/models/number_format.hpp"
#include "gui/models/preset_catalog.hpp"

namespace ddpsim::gui {

namespace {
constexpr int kSystem = 0, kGpu = 1, kPrice = 2, kMemory = 3, kNetwork = 4;
}  // namespace

std::vector<HardwarePreset> hardwarePresets() {
  // The catalog already resolved every preset (sorted; an unreadable one keeps its name and no
  // GPU, and choosing it shows its error in the status bar).
  std::vector<HardwarePreset> out;
  for (const SystemFacts& s : systemCatalog()) out.push_back({s.name, s.gpu});
  return out;
}

SystemsPicker::SystemsPicker(QWidget* parent) : QTableWidget(0, 5, parent) {
  setObjectName(QStringLiteral("systemsPicker"));
  // Each system's GPU, memory and network beside its name (the buyer's review, defect 15).
  setHorizontalHeaderLabels(
      {tr("compare"), tr("GPU"), tr("USD per GPU-hour"), tr("memory per GPU"), tr("network")});
  horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  horizontalHeader()->setStretchLastSection(true);
  verticalHeader()->setVisible(false);
  setWordWrap(false);
  setSelectionMode(QAbstractItemView::NoSelection);
  setEditTriggers(QAbstractItemView::AllEditTriggers);
}

void SystemsPicker::setSystems(const std::vector<HardwarePreset>& presets,
                               const std::vector<std::string>& checked,
                               const std::map<std::string, double>& prices) {
  setRowCount(static_cast<int>(presets.size()));
  for (int row = 0; row < rowCount(); ++row) {
    const HardwarePreset& p = presets[static_cast<std::size_t>(row)];
    auto* name = new QTableWidgetItem(QString::fromStdString(p.name));
    name->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
    const bool on = std::find(checked.begin(), checked.end(), p.name) != checked.end();
    name->setCheckState(on ? Qt::Checked : Qt::Unchecked);
    setItem(row, kSystem, name);
    auto* gpu = new QTableWidgetItem(QString::fromStdString(p.gpu));
    gpu->setFlags(Qt::ItemIsEnabled);
    setItem(row, kGpu, gpu);
    const auto it = prices.find(p.name);
    auto* price =
        new QTableWidgetItem(it == prices.end() ? QString() : QString::number(it->second, 'g', 6));
    price->setFlags(Qt::ItemIsEnabled | Qt::ItemIsEditable);
    price->setToolTip(tr("USD per GPU-hour for %1 (empty: no price; costs then say GPU-hours)")
                          .arg(QString::fromStdString(p.name)));
    setItem(row, kPrice, price);
    const SystemFacts* facts = systemFacts(p.name);
    const bool known = facts != nullptr && facts->error.empty();
    auto* memory = new QTableWidgetItem(
        known ? QStringLiteral("%1 GiB").arg(formatNumber(facts->memoryGib, 3)) : QString());
    memory->setFlags(Qt::ItemIsEnabled);
    setItem(row, kMemory, memory);
    QString network;
    if (known) {
      // In a node + between nodes, short enough for one line; the tooltip says it in words.
      network = QString::fromStdString(facts->intraNode);
      if (facts->nicsPerNode > 0) {
        network += QStringLiteral(" + %1 x %2 Gb/s")
                       .arg(facts->nicsPerNode)
                       .arg(formatNumber(facts->nicGbps, 3));
      }
    }
    auto* net = new QTableWidgetItem(network);
    net->setFlags(Qt::ItemIsEnabled);
    net->setToolTip(known ? systemSummary(*facts) : QString());
    setItem(row, kNetwork, net);
  }
  // Every system in view without scrolling (the data folder ships six), no empty space below.
  int height = horizontalHeader()->sizeHint().height() + 2 * frameWidth();
  for (int row = 0; row < std::min(rowCount(), 8); ++row)
    height += verticalHeader()->sectionSize(row);
  setMaximumHeight(height);
  setMinimumHeight(height);
}

int SystemsPicker::rowOf(const std::string& system) const {
  for (int row = 0; row < rowCount(); ++row) {
    if (item(row, kSystem) && item(row, kSystem)->text().toStdString() == system) return row;
  }
  return -1;
}

void SystemsPicker::setChecked(const std::string& system, bool on) {
  if (const int row = rowOf(system); row >= 0) {
    item(row, kSystem)->setCheckState(on ? Qt::Checked : Qt::Unchecked);
  }
}

std::vector<std::string> SystemsPicker::checkedSystems() const {
  std::vector<std::string> out;
  for (int row = 0; row < rowCount(); ++row) {
    const QTableWidgetItem* it = item(row, kSystem);
    if (it && it->checkState() == Qt::Checked) out.push_back(it->text().toStdString());
  }
  return out;
}

std::map<std::string, double> SystemsPicker::prices() const {
  std::map<std::string, double> out;
  for (int row = 0; row < rowCount(); ++row) {
    const QTableWidgetItem* name = item(row, kSystem);
    const QTableWidgetItem* price = item(row, kPrice);
    if (!name || !price) continue;
    bool ok = false;
    const double v = price->text().trimmed().toDouble(&ok);
    if (ok && v > 0 && std::isfinite(v)) out[name->text().toStdString()] = v;
  }
  return out;
}

}  // namespace ddpsim::gui
