#include "widgets/summary/model_summary_view.h"

#include "core/base/bytes.h"
#include "core/graph/pipeline_file.h"
#include "widgets/editing/edited_pipeline.h"

#include <QApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QPainter>
#include <QProcess>
#include <QPushButton>
#include <QStyledItemDelegate>
#include <QTableWidget>
#include <QTimer>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

namespace fb::widgets {

namespace {

enum Column { Node, Type, Output, Parameters, Forward, Backward, Activations, Share, Measured };

// The same figures as `flowbench-cli summary` prints (core/base/bytes.h).
QString flops(double v)
{
    return QString::fromStdString(humanFlops(v));
}

QString bytes(double v)
{
    return QString::fromStdString(humanBytes(v));
}

QString shape(const QJsonArray &dims)
{
    QStringList parts;
    for (const QJsonValue &d : dims)
        parts << QString::number(d.toInteger());
    return "[" + parts.join(", ") + "]";
}

QString grouped(qint64 n)
{
    return QString::fromStdString(groupedDigits(n));
}

// The share column: a bar as long as the layer's share of the step, the percentage on it, so
// that the layers that matter stand out without reading a number.
class ShareDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter *p, const QStyleOptionViewItem &option,
               const QModelIndex &index) const override
    {
        QStyleOptionViewItem o = option;
        initStyleOption(&o, index);
        o.text.clear();
        QApplication::style()->drawControl(QStyle::CE_ItemViewItem, &o, p);
        const QVariant value = index.data(Qt::UserRole);
        if (!value.isValid()) return; // the input and total rows
        const double share = value.toDouble();
        const QRect r = option.rect.adjusted(3, 4, -3, -4);
        p->save();
        p->fillRect(QRect(r.left(), r.top(), int(r.width() * std::clamp(share, 0.0, 1.0)),
                          r.height()),
                    QColor(share >= 0.5 ? "#d9822b" : "#4c8bd6"));
        p->setPen(option.palette.color(QPalette::Text));
        p->drawText(r, Qt::AlignRight | Qt::AlignVCenter,
                    QString::number(100 * share, 'f', 1) + "%");
        p->restore();
    }
};

} // namespace

ModelSummaryView::ModelSummaryView(EditedPipeline *pipeline, QWidget *parent)
    : QWidget(parent)
    , m_pipeline(pipeline)
    , m_debounce(new QTimer(this))
{
    setObjectName("model_summary");
    m_headline = new QLabel;
    m_headline->setObjectName("summary_headline");
    m_headline->setWordWrap(true);
    m_headline->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error = new QLabel;
    m_error->setObjectName("summary_error");
    m_error->setWordWrap(true);
    m_error->setStyleSheet("color: #c0392b");
    m_error->setTextFormat(Qt::RichText);
    m_error->setToolTip(tr("Click the node's name to show it"));
    connect(m_error, &QLabel::linkActivated, this, [this](const QString &link) {
        // "act3.in" names a port: the node is the part before the dot (ids have none).
        emit nodeActivated(QUrl::fromPercentEncoding(link.toUtf8()).section('.', 0, 0));
    });
    m_error->hide();
    m_measured = new QLabel;
    m_measured->setObjectName("summary_measured");
    m_measured->setWordWrap(true);
    m_measured->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_measured->hide();
    m_measure = new QPushButton(tr("Measure"));
    m_measure->setObjectName("summary_measure");
    m_measure->setToolTip(tr("Time a few training steps of this model on random data, on the "
                             "CPU and on the GPU when there is one: milliseconds per step and "
                             "the GFLOP/s achieved"));
    connect(m_measure, &QPushButton::clicked, this, &ModelSummaryView::measure);

    m_table = new QTableWidget(0, 9);
    m_table->setObjectName("summary_table");
    m_table->setHorizontalHeaderLabels({tr("Node"), tr("Type"), tr("Output"), tr("Parameters"),
                                        tr("Forward FLOPs"), tr("Backward FLOPs"),
                                        tr("Activations"), tr("Share of step"), tr("Measured")});
    m_table->horizontalHeaderItem(Share)->setToolTip(
        tr("The layer's share of the training step's FLOPs, forward and backward"));
    m_table->horizontalHeaderItem(Measured)->setToolTip(
        tr("Forward and backward time per step, measured on the CPU (Measure)"));
    m_table->horizontalHeaderItem(Activations)->setToolTip(
        tr("The layer's output for the whole batch, float32"));
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setItemDelegateForColumn(Share, new ShareDelegate(m_table));
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(Share, QHeaderView::Stretch);
    m_table->setColumnHidden(Measured, true);
    connect(m_table, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        if (QTableWidgetItem *it = m_table->item(row, Node)) emit nodeActivated(it->text());
    });

    auto *top = new QHBoxLayout;
    top->addWidget(m_headline, 1);
    top->addWidget(m_measure, 0, Qt::AlignTop);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addLayout(top);
    layout->addWidget(m_error);
    layout->addWidget(m_measured);
    layout->addWidget(m_table, 1);

    m_debounce->setSingleShot(true);
    m_debounce->setInterval(300);
    connect(m_debounce, &QTimer::timeout, this, [this] {
        // A hidden view (a dock tab behind another) asks when it is shown, not after every edit
        // nor at start-up.
        if (!isVisible()) {
            m_stale = true;
            return;
        }
        start(false);
    });
    connect(m_pipeline, &EditedPipeline::documentChanged, m_debounce,
            qOverload<>(&QTimer::start));
    connect(m_pipeline, &EditedPipeline::documentReplaced, m_debounce,
            qOverload<>(&QTimer::start));
    m_headline->setText(tr("The model's layers, parameters, FLOPs and memory appear here."));
}

ModelSummaryView::~ModelSummaryView()
{
    if (m_process) {
        m_process->disconnect(this);
        m_process->kill();
        m_process->waitForFinished(2000);
    }
}

void ModelSummaryView::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (std::exchange(m_stale, false)) m_debounce->start();
}

bool ModelSummaryView::busy() const
{
    return m_process || m_debounce->isActive();
}

void ModelSummaryView::refresh()
{
    m_debounce->stop();
    start(false);
}

void ModelSummaryView::measure()
{
    m_debounce->stop();
    start(true);
}

QString ModelSummaryView::headline() const
{
    return m_headline->text();
}

QString ModelSummaryView::errorText() const
{
    if (m_summary["status"].toString() == "ok") return {};
    const QJsonObject e = m_summary["error"].toObject();
    const QString node = e["node"].toString();
    return node.isEmpty() ? e["message"].toString() : node + ": " + e["message"].toString();
}

void ModelSummaryView::start(bool measure)
{
    if (m_process) {
        // One at a time: the answer to the newest document is asked for when this one ends.
        m_again = true;
        m_measureNext = m_measureNext || measure;
        return;
    }
    if (m_cli.isEmpty()) {
        m_error->setText(tr("flowbench-cli was not found, so the model cannot be summarized"));
        m_error->show();
        return;
    }
    m_process = new QProcess(this);
    QStringList args{"summary", "-", "--json"};
    if (measure) args << "--measure";
    connect(m_process, &QProcess::finished, this, &ModelSummaryView::finished);
    connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart) finished();
    });
    m_measure->setEnabled(false);
    if (measure) {
        m_measured->setText(tr("Measuring: a few training steps on each device…"));
        m_measured->show();
    }
    m_process->start(m_cli, args);
    m_process->write(QByteArray::fromStdString(graph::serializePipeline(m_pipeline->document())));
    m_process->closeWriteChannel();
}

void ModelSummaryView::finished()
{
    QProcess *p = m_process;
    if (!p) return;
    m_process = nullptr;
    p->deleteLater();
    const QByteArray out = p->readAllStandardOutput();
    const QList<QByteArray> lines = out.trimmed().split('\n');
    QJsonObject answer = QJsonDocument::fromJson(lines.isEmpty() ? QByteArray() : lines.last())
                             .object();
    if (answer.isEmpty()) {
        QString why = p->error() == QProcess::FailedToStart
                          ? tr("flowbench-cli could not be started: %1").arg(p->errorString())
                          : QString::fromLocal8Bit(p->readAllStandardError()).trimmed();
        if (why.isEmpty()) why = tr("flowbench-cli summary gave no answer");
        answer = QJsonObject{{"status", "error"}, {"error", QJsonObject{{"message", why}}}};
    }
    m_measure->setEnabled(true);
    if (m_again) {
        // The document changed meanwhile: this answer is already old.
        m_again = false;
        const bool measureNext = std::exchange(m_measureNext, false);
        start(measureNext);
        return;
    }
    showAnswer(answer);
}

void ModelSummaryView::showAnswer(const QJsonObject &s)
{
    m_summary = s;
    if (s["status"].toString() != "ok") {
        const QJsonObject e = s["error"].toObject();
        const QString node = e["node"].toString();
        const QString message = e["message"].toString().toHtmlEscaped();
        m_error->setText(node.isEmpty() ? message
                                        : tr("<a href=\"%1\">%2</a>: %3")
                                              .arg(QString::fromLatin1(QUrl::toPercentEncoding(node)),
                                                   node.toHtmlEscaped(), message));
        m_error->show();
        m_measured->hide();
        m_table->setRowCount(0);
        m_headline->setText(tr("No summary while the pipeline has a problem."));
        emit updated();
        return;
    }
    m_error->clear();
    m_error->hide();
    const QJsonObject input = s["input"].toObject(), totals = s["totals"].toObject();
    const QJsonArray layers = s["layers"].toArray();
    const qint64 batch = s["batch"].toInteger();
    const double step = totals["forward_flops"].toDouble() + totals["backward_flops"].toDouble();
    const QJsonObject dominant = s["dominant"].toObject();
    QString head =
        tr("<b>%1</b> parameters · <b>%2FLOP</b> per training step of %3 · at least <b>%4</b> to "
           "train · input %5 from %6")
            .arg(grouped(totals["parameters"].toInteger()), flops(step))
            .arg(batch)
            .arg(bytes(totals["training_bytes"].toDouble()), shape(input["shape"].toArray()),
                 input["source"].toString());
    if (!dominant.isEmpty())
        head += tr(" · dominant layer <b>%1</b> (%2% of the FLOPs)")
                    .arg(dominant["node"].toString())
                    .arg(100 * dominant["share"].toDouble(), 0, 'f', 0);
    for (const QJsonValue &n : s["notes"].toArray())
        head += "<br><small>" + n.toString().toHtmlEscaped() + "</small>";
    m_headline->setText(head);

    QMap<QString, double> measuredLayer;
    QStringList measuredLines;
    for (const QJsonValue &v : s["measured"].toArray()) {
        const QJsonObject m = v.toObject();
        QString who = m["device"].toString();
        if (!m["name"].toString().isEmpty()) who += " (" + m["name"].toString() + ")";
        if (m["threads"].toInt() > 0) who += tr(", %1 threads").arg(m["threads"].toInt());
        if (m.contains("error")) {
            measuredLines << tr("%1: could not run: %2").arg(who, m["error"].toString());
            continue;
        }
        QString line = tr("%1: <b>%2 ms</b> per step, %3 samples/s, <b>%4 GFLOP/s</b> achieved")
                           .arg(who)
                           .arg(1e3 * m["step_s"].toDouble(), 0, 'f', 2)
                           .arg(grouped(qint64(m["samples_per_s"].toDouble() + 0.5)))
                           .arg(m["gflops"].toDouble(), 0, 'f', 1);
        const QJsonObject slowest = m["slowest"].toObject();
        if (!slowest.isEmpty())
            line += tr("; slowest layer %1 (%2% of the measured time)")
                        .arg(slowest["node"].toString())
                        .arg(100 * slowest["share"].toDouble(), 0, 'f', 0);
        measuredLines << line;
        if (measuredLayer.isEmpty())
            for (const QJsonValue &l : m["layers"].toArray())
                measuredLayer[l["id"].toString()] = l["seconds"].toDouble();
    }
    m_measured->setText(measuredLines.join("<br>"));
    m_measured->setVisible(!measuredLines.isEmpty());
    m_table->setColumnHidden(Measured, measuredLayer.isEmpty());

    m_table->setRowCount(int(layers.size()) + 2);
    auto set = [this](int row, int col, const QString &text, bool right = false) {
        auto *it = new QTableWidgetItem(text);
        if (right) it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        m_table->setItem(row, col, it);
        return it;
    };
    set(0, Node, input["node"].toString());
    set(0, Type, "input");
    set(0, Output, shape(input["shape"].toArray()));
    set(0, Activations, bytes(totals["input_bytes"].toDouble()), true);
    int row = 1;
    for (const QJsonValue &v : layers) {
        const QJsonObject l = v.toObject();
        const QString id = l["id"].toString();
        set(row, Node, id);
        set(row, Type, l["type"].toString());
        set(row, Output, shape(l["output"].toArray()));
        QTableWidgetItem *params = set(row, Parameters, grouped(l["parameters"].toInteger()), true);
        if (l["buffers"].toInteger() > 0)
            params->setToolTip(tr("%1 more saved with the weights and not trained (running "
                                  "statistics)")
                                   .arg(grouped(l["buffers"].toInteger())));
        set(row, Forward, flops(l["forward_flops"].toDouble()), true);
        set(row, Backward, flops(l["backward_flops"].toDouble()), true);
        const double act = l["activation_bytes"].toDouble();
        set(row, Activations, bytes(act), true);
        set(row, Share, QString())->setData(Qt::UserRole, l["share"].toDouble());
        if (measuredLayer.contains(id))
            set(row, Measured, tr("%1 ms").arg(1e3 * measuredLayer[id], 0, 'f', 2), true);
        if (id == dominant["node"].toString())
            for (int c = 0; c <= Measured; ++c)
                if (QTableWidgetItem *it = m_table->item(row, c)) {
                    QFont f = it->font();
                    f.setBold(true);
                    it->setFont(f);
                }
        ++row;
    }
    QTableWidgetItem *total = set(row, Node, tr("total"));
    QFont bold = total->font();
    bold.setBold(true);
    total->setFont(bold);
    set(row, Parameters, grouped(totals["parameters"].toInteger()), true)->setFont(bold);
    set(row, Forward, flops(totals["forward_flops"].toDouble()), true)->setFont(bold);
    set(row, Backward, flops(totals["backward_flops"].toDouble()), true)->setFont(bold);
    set(row, Activations, bytes(totals["activation_bytes"].toDouble()), true)->setFont(bold);
    emit updated();
}

} // namespace fb::widgets
