// The window's menus (MainWindow, main_window.hpp): File (open, recent files, save, export,
// quit), Edit (undo, redo), Compare (pin) and Help (about). The buyer's review, defect 16: the
// Open dialog started in the working directory, and there were no recent files and no Help menu.
#include <QAction>
#include <QApplication>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QTabWidget>
#include <filesystem>

#include "gui/app/chart_export.hpp"
#include "gui/app/main_window.hpp"
#include "model/paths.hpp"

namespace ddpsim::gui {

namespace {

constexpr int kRecentFiles = 8;
const QString kRecentKey = QStringLiteral("recentFiles");

}  // namespace

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open =
      file->addAction(tr("&Open scenario…"), QKeySequence::Open, this, &MainWindow::chooseAndOpen);
  open->setObjectName(QStringLiteral("openAction"));
  m_recentMenu = file->addMenu(tr("Open &recent"));
  m_recentMenu->setObjectName(QStringLiteral("recentMenu"));
  rebuildRecentMenu();
  file->addAction(tr("&Save"), QKeySequence::Save, this, [this] {
    QString p = m_doc.filePath();
    if (p.isEmpty())
      p = QFileDialog::getSaveFileName(this, tr("Save scenario"), openDirectory(),
                                       tr("JSON (*.json)"));
    if (!p.isEmpty() && saveFile(p)) addRecentFile(p);
  });
  file->addAction(tr("Save &as…"), QKeySequence::SaveAs, this, [this] {
    const QString p = QFileDialog::getSaveFileName(this, tr("Save scenario"), m_doc.filePath(),
                                                   tr("JSON (*.json)"));
    if (!p.isEmpty() && saveFile(p)) addRecentFile(p);
  });
  file->addSeparator();
  file->addAction(tr("Export chart as &PNG…"), this, [this] { exportCurrentChart("png"); });
  QAction* svg =
      file->addAction(tr("Export chart as S&VG…"), this, [this] { exportCurrentChart("svg"); });
  svg->setEnabled(svgExportAvailable());
  file->addAction(tr("Export table as &CSV…"), this, [this] {
    const QString p = QFileDialog::getSaveFileName(this, tr("Export table"),
                                                   QStringLiteral("sweep.csv"), tr("CSV (*.csv)"));
    if (!p.isEmpty()) exportTableCsv(p);
  });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  m_undoAction = edit->addAction(tr("&Undo"), QKeySequence::Undo, this, &MainWindow::undo);
  m_redoAction = edit->addAction(tr("&Redo"), QKeySequence::Redo, this, &MainWindow::redo);
  // Every binding of the platform (Redo: Ctrl+Shift+Z and Ctrl+Y), not only the first.
  m_undoAction->setShortcuts(QKeySequence::Undo);
  m_redoAction->setShortcuts(QKeySequence::Redo);
  m_undoAction->setObjectName(QStringLiteral("undoAction"));
  m_redoAction->setObjectName(QStringLiteral("redoAction"));
  m_undoAction->setEnabled(false);
  m_redoAction->setEnabled(false);
  QMenu* compare = menuBar()->addMenu(tr("&Compare"));
  compare->addAction(tr("&Pin current scenario"), this, &MainWindow::pinCurrent);
  compare->addAction(tr("&Clear pin"), this, &MainWindow::clearPin);
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->setObjectName(QStringLiteral("helpMenu"));
  QAction* about = help->addAction(tr("&About ddpsim planner…"), this, [this] {
    QMessageBox::about(this, tr("About ddpsim planner"), aboutText());
  });
  about->setObjectName(QStringLiteral("aboutAction"));
  help->addAction(tr("About &Qt…"), qApp, &QApplication::aboutQt);
}

QString MainWindow::openDirectory() const {
  if (!m_doc.filePath().isEmpty()) return QFileInfo(m_doc.filePath()).absolutePath();
  try {
    const std::filesystem::path dir = model::data_dir();
    if (std::filesystem::is_directory(dir)) return QString::fromStdString(dir.string());
  } catch (const std::exception&) {
    // No data folder: the working directory.
  }
  return QDir::currentPath();
}

void MainWindow::chooseAndOpen() {
  if (!maybeSave()) return;
  const QString dir = openDirectory();
  const QString p = m_openChooser ? m_openChooser(dir)
                                  : QFileDialog::getOpenFileName(this, tr("Open scenario"), dir,
                                                                 tr("JSON (*.json)"));
  if (!p.isEmpty() && openFile(p)) addRecentFile(p);
}

QStringList MainWindow::recentFiles() const { return QSettings().value(kRecentKey).toStringList(); }

void MainWindow::addRecentFile(const QString& path) {
  const QString full = QFileInfo(path).absoluteFilePath();
  QStringList files = recentFiles();
  files.removeAll(full);
  files.prepend(full);
  while (files.size() > kRecentFiles) files.removeLast();
  QSettings().setValue(kRecentKey, files);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  m_recentMenu->clear();
  const QStringList files = recentFiles();
  for (int i = 0; i < files.size(); ++i) {
    const QString path = files[i];
    QAction* a = m_recentMenu->addAction(
        QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName()), this, [this, path] {
          if (!maybeSave()) return;
          if (openFile(path)) {
            addRecentFile(path);
          } else {
            // Gone or unreadable: the status bar says why, and the entry goes.
            QStringList left = recentFiles();
            left.removeAll(path);
            QSettings().setValue(kRecentKey, left);
            rebuildRecentMenu();
          }
        });
    a->setToolTip(path);
    a->setStatusTip(path);
  }
  m_recentMenu->setEnabled(!files.isEmpty());
}

QString MainWindow::aboutText() const {
  return tr("<b>ddpsim planner %1</b><p>Plans data-parallel training for a buyer: how many GPUs "
            "of which system, which strategy, how long and at what cost. Every number comes "
            "from ddpsim's model of the scenario on the left (its step time, memory and "
            "collectives), with the error band of published runs like it.</p><p>Scenarios and "
            "presets: %2<br>Built with Qt %3.</p>")
      .arg(QCoreApplication::applicationVersion().toHtmlEscaped(), openDirectory().toHtmlEscaped(),
           QString::fromLatin1(qVersion()));
}

}  // namespace ddpsim::gui
