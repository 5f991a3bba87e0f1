// stale_banner.hpp: the "Not updated" line over a view that keeps the last valid result while
// the scenario does not validate (issue 41 item 3: the Recommendation and Table tabs kept the
// B200's answer under a gb200-nvl72 panel with no mark; only the charts had one).
//
//   StaleBanner* banner = new StaleBanner;
//   banner->setStale(true, "/plan/gpus/4");   // shown, red
//   banner->setStale(false);                  // hidden
#pragma once

#include <QLabel>

namespace ddpsim::gui {

class StaleBanner : public QLabel {
  Q_OBJECT

 public:
  explicit StaleBanner(QWidget* parent = nullptr);

  /// Shows (naming the pointer of the problem, when there is one) or hides the banner.
  void setStale(bool stale, const QString& pointer = {});
  bool isStale() const { return m_stale; }

  /// The sentence shown, e.g. "Not updated: the scenario does not validate (/plan/gpus/4);
  /// showing the last valid result".
  static QString sentence(const QString& pointer);

 private:
  bool m_stale = false;
};

}  // namespace ddpsim::gui
