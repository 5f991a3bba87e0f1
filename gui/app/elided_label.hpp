// elided_label.hpp: a one-line label that never cuts its text mid-word (the buyer's review,
// defect 12: at 1280x800 the status bar read "... largest term: activatio"). The text is drawn
// whole when it fits and otherwise shortened with an ellipsis ("...") at the label's width, with
// the whole text as the tooltip. Its minimum width does not grow with the text, so a status bar
// keeps its other widgets.
//
//   auto* status = new ElidedLabel;
//   status->setFullText("the panel's fsdp2: does not fit in GPU memory at 1-4 GPUs ...");
//   status->fullText();   // the whole text; text() is what is drawn
#pragma once

#include <QLabel>

namespace ddpsim::gui {

class ElidedLabel : public QLabel {
  Q_OBJECT

 public:
  explicit ElidedLabel(QWidget* parent = nullptr);

  void setFullText(const QString& text);
  const QString& fullText() const { return m_full; }
  /// The text drawn is shorter than the full text.
  bool isElided() const { return text() != m_full; }

  QSize minimumSizeHint() const override;

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void elide();

  QString m_full;
};

}  // namespace ddpsim::gui
