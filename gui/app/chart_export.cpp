#include "gui/app/chart_export.hpp"

#include <QBuffer>
#include <QChartView>
#include <QImage>
#include <QPainter>
#ifdef DDPSIM_GUI_HAVE_SVG
#include <QSvgGenerator>
#endif

#include "gui/app/timeline_view.hpp"
#include "model/atomic_file.hpp"

namespace ddpsim::gui {

namespace {

void renderInto(QWidget* view, QPainter& p, const QRect& target) {
  if (auto* chart = qobject_cast<QChartView*>(view)) {
    chart->render(&p, QRectF(target), chart->viewport()->rect());
  } else if (auto* timeline = qobject_cast<TimelineView*>(view)) {
    timeline->paintTo(p, target);
  } else {
    view->render(&p);
  }
}

// The rendered bytes go to the file as every result file does (model/atomic_file.hpp).
bool commit(const QByteArray& bytes, const QString& path, QString* error) {
  try {
    model::write_file_atomic(path.toStdString(), bytes.toStdString());
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  return true;
}

}  // namespace

bool svgExportAvailable() {
#ifdef DDPSIM_GUI_HAVE_SVG
  return true;
#else
  return false;
#endif
}

bool exportView(QWidget* view, const QString& path, QString* error) {
  const QSize size = view->size();
  if (path.endsWith(QStringLiteral(".svg"), Qt::CaseInsensitive)) {
#ifdef DDPSIM_GUI_HAVE_SVG
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator gen;
    gen.setOutputDevice(&buffer);
    gen.setSize(size);
    gen.setViewBox(QRect(QPoint(0, 0), size));
    gen.setTitle(QStringLiteral("ddpsim"));
    QPainter p;
    if (!p.begin(&gen)) {
      if (error) *error = QStringLiteral("cannot write %1").arg(path);
      return false;
    }
    renderInto(view, p, QRect(QPoint(0, 0), size));
    p.end();
    return commit(bytes, path, error);
#else
    if (error) *error = QStringLiteral("SVG export is not built (install qt6-svg-dev and rebuild)");
    return false;
#endif
  }
  QImage image(size * 2, QImage::Format_ARGB32_Premultiplied);
  image.setDevicePixelRatio(2);
  image.fill(Qt::white);
  {
    QPainter p(&image);
    p.setRenderHint(QPainter::Antialiasing);
    renderInto(view, p, QRect(QPoint(0, 0), size));
  }
  QByteArray bytes;
  QBuffer buffer(&bytes);
  if (!buffer.open(QIODevice::WriteOnly) || !image.save(&buffer, "PNG")) {
    if (error) *error = QStringLiteral("cannot write %1 (PNG encoding failed)").arg(path);
    return false;
  }
  return commit(bytes, path, error);
}

bool writeTextFile(const QString& path, const QString& text, QString* error) {
  return commit(text.toUtf8(), path, error);
}

}  // namespace ddpsim::gui
