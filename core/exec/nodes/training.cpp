// Training: losses, optimizers (with their learning-rate schedules), Train and Evaluate.

#include "core/exec/nodes/catalog.h"
#include "core/exec/nodes/describe.h"
#include "core/nn/loss.h"
#include "core/nn/optimizer.h"

namespace fb::exec::nodes {

namespace {

NodeType loss(std::string type, std::string title, std::string help,
              std::function<std::unique_ptr<nn::Loss>(const NodeParams &)> make,
              std::vector<ParamSpec> params = {})
{
    NodeType t =
        nodeType(NodeRole::Loss, std::move(type), "Training", std::move(title), std::move(help));
    t.spec.outputs = {port("loss", PortType::Loss, "Wire to the Train node's loss.")};
    t.spec.params = std::move(params);
    t.makeLoss = std::move(make);
    return t;
}

std::vector<ParamSpec> scheduleParams()
{
    return {
        enumParam("schedule", {"constant", "step", "cosine"}, "constant",
                  "Learning-rate schedule after warmup: constant, step decay or cosine decay."),
        intParam("warmup_steps", 0, closed(0, kMaxSteps),
                 "Linear warmup from 0 to lr over this many steps; 0 = no warmup."),
        intParam("step_epochs", 10, closed(1, kMaxEpochs),
                 "For the step schedule: multiply the rate by gamma every step_epochs epochs."),
        floatParam("gamma", 0.1, leftOpen(0, 1), "For the step schedule: the decay factor."),
        floatParam("min_lr", 0.0, closed(0, 10),
                   "For the cosine schedule: the rate it decays to at the last step."),
    };
}

nn::LrSchedule readSchedule(const NodeParams &p, float base)
{
    nn::LrSchedule s;
    const std::string kind = p.s("schedule");
    s.kind = kind == "step"     ? nn::LrSchedule::Kind::Step
             : kind == "cosine" ? nn::LrSchedule::Kind::Cosine
                                : nn::LrSchedule::Kind::Constant;
    s.base = base;
    s.warmupSteps = p.i("warmup_steps");
    s.stepEpochs = p.i("step_epochs");
    s.gamma = p.f("gamma");
    s.minLr = p.f("min_lr");
    return s;
}

NodeType optimizer(std::string type, std::string title, std::string help,
                   std::vector<ParamSpec> params)
{
    NodeType t = nodeType(NodeRole::Optimizer, std::move(type), "Training", std::move(title),
                          std::move(help));
    t.spec.outputs = {
        port("optimizer", PortType::Optimizer, "Wire to the Train node's optimizer.")};
    t.spec.params = std::move(params);
    for (ParamSpec &p : scheduleParams())
        t.spec.params.push_back(std::move(p));
    return t;
}

NodeType adam(std::string type, std::string title, std::string help, double weightDecay,
              const char *decayHelp, bool decoupled)
{
    NodeType t = optimizer(
        std::move(type), std::move(title), std::move(help),
        {floatParam("lr", 0.001, leftOpen(0, 10), "Learning rate (peak rate when scheduled)."),
         floatParam("beta1", 0.9, halfOpen(0, 1), "Decay rate of the gradient mean."),
         floatParam("beta2", 0.999, halfOpen(0, 1), "Decay rate of the squared-gradient mean."),
         floatParam("eps", 1e-8, leftOpen(0, 1),
                    "Added to the denominator for numerical stability."),
         floatParam("weight_decay", weightDecay, closed(0, 1), decayHelp)});
    t.readOptimizer = [decoupled](const NodeParams &p, OptimizerSpec &o) {
        o.adam.lr = p.f("lr");
        o.adam.beta1 = p.f("beta1");
        o.adam.beta2 = p.f("beta2");
        o.adam.eps = p.f("eps");
        o.adam.weightDecay = p.f("weight_decay");
        o.adam.decoupled = decoupled;
        o.stateCopies = 2; // first and second moments
        o.schedule = readSchedule(p, o.adam.lr);
    };
    t.makeOptimizer = [](const OptimizerSpec &o) { return nn::makeAdam(o.adam); };
    return t;
}

} // namespace

void addTraining(NodeCatalog &c)
{
    c.add(loss(
        "cross_entropy", "Cross-entropy loss",
        "Softmax cross-entropy of the model's outputs against the labels, mean over the batch.",
        [](const NodeParams &p) {
            return nn::makeCrossEntropy(p.f("label_smoothing"), p.f("logit_adjustment"));
        },
        {floatParam("label_smoothing", 0.0, halfOpen(0, 1),
                    "Target (1 - s) for the label and s / classes for every class, as PyTorch's "
                    "label_smoothing; 0 = the label alone. Keeps the model from growing ever "
                    "surer of its training labels (0.1 is usual)."),
         floatParam("logit_adjustment", 0.0, closed(0, 4),
                    "In training, adds this times log(the class's share of the training labels) "
                    "to each output before the softmax (Menon et al. 2021's logit-adjusted "
                    "loss): the model learns to name a class for the evidence, not for how "
                    "common the class was in training. 1: every class as likely as every other "
                    "(a class the data has many of, such as 'unknown', wins no more for it); "
                    "0: as common as in the training data.")}));
    c.add(loss("mse", "Mean squared error",
               "Mean squared error of the model's outputs against one-hot labels.",
               [](const NodeParams &) { return nn::makeMse(); }));
    {
        NodeType t = optimizer(
            "sgd", "SGD", "Stochastic gradient descent, optionally with momentum.",
            {floatParam("lr", 0.01, leftOpen(0, 10), "Learning rate (peak rate when scheduled)."),
             floatParam("momentum", 0.0, closed(0, 1), "Momentum factor; 0 = plain SGD."),
             boolParam("nesterov", false, "Use Nesterov momentum."),
             floatParam("weight_decay", 0.0, closed(0, 1), "L2 penalty added to the gradient.")});
        t.readOptimizer = [](const NodeParams &p, OptimizerSpec &o) {
            o.sgd.lr = p.f("lr");
            o.sgd.momentum = p.f("momentum");
            o.sgd.nesterov = p.b("nesterov");
            o.sgd.weightDecay = p.f("weight_decay");
            o.stateCopies = o.sgd.momentum != 0 ? 1 : 0; // the momentum buffer
            o.schedule = readSchedule(p, o.sgd.lr);
        };
        t.makeOptimizer = [](const OptimizerSpec &o) { return nn::makeSgd(o.sgd); };
        c.add(std::move(t));
    }
    c.add(adam("adam", "Adam", "Adam: adaptive per-parameter rates from gradient moments.", 0.0,
               "L2 penalty added to the gradient (coupled, as in Adam).", false));
    c.add(adam("adamw", "AdamW", "Adam with weight decay applied directly to the weights.", 0.01,
               "Decoupled weight decay, applied to the weights each step.", true));
    {
        NodeType t = nodeType(
            NodeRole::Train, "train", "Training", "Train",
            "Trains the model on the data with the loss and optimizer; writes checkpoints.");
        NodeTypeSpec &s = t.spec;
        s.inputs = {
            port("data", PortType::Samples, "Training samples; they set the model's input shape."),
            port("model", PortType::Tensor, "Output of the model's last layer."),
            port("loss", PortType::Loss, "Loss to minimize."),
            port("optimizer", PortType::Optimizer, "How the weights are updated."),
        };
        s.outputs = {port("trained", PortType::Model, "The trained model, for Evaluate.")};
        // The run-only parameters say how a run goes, not what it computes: training longer,
        // checkpointing more often or moving device continues the same run (--resume).
        s.params = {
            runOnly(intParam("epochs", 1, closed(1, kMaxEpochs), "Passes over the training data.")),
            intParam("batch_size", 128, closed(1, kMaxBatch), "Samples per training step."),
            intParam("seed", 0, closed(0, kMaxSeed), "Seeds weight init, shuffling and dropout."),
            boolParam("shuffle", true, "Shuffle the samples at the start of every epoch."),
            floatParam("average_last", 0.0, closed(0, 1),
                       "Average the weights of the last share of the epochs (0.5: the second "
                       "half): the model evaluated from the first of them on, and saved, is the "
                       "mean of the weights at the end of each (stochastic weight averaging, batch "
                       "norm's statistics averaged too); training goes on from the last weights. "
                       "0 = the last weights alone."),
            runOnly(intParam("checkpoint_every", 1, closed(0, kMaxEpochs),
                             "Write a checkpoint every N epochs; 0 = only at the end.")),
            runOnly(intParam("checkpoint_steps", 0, closed(0, kMaxSteps),
                             "Also write a checkpoint every N steps; 0 = only at epoch ends.")),
            runOnly(intParam("keep_checkpoints", 3, closed(0, 10000),
                             "How many of the newest checkpoints to keep; 0 = keep them all.")),
            runOnly(intParam("data_workers", 0, closed(0, 256),
                             "Threads that prepare batches; 0 = one per two cores (at least 1); "
                             "at most 256, as --data-workers.")),
            runOnly(enumParam("device", {"auto", "cpu", "cuda"}, "auto",
                              "Where to train; auto = the GPU when there is one, else the CPU.")),
            runOnly(enumParam(
                "precision", {"float32", "tf32", "bf16"}, "float32",
                "Arithmetic of convolutions and matrix products on a GPU: float32 gives "
                "the CPU's results within rounding; tf32 uses the tensor cores (10-bit "
                "mantissa inputs, float32 sums), faster on Ampere and newer; bf16 rounds "
                "their inputs to bfloat16 (8-bit mantissa) with float32 sums, weights and "
                "everything else. The CPU always computes float32.")),
            runOnly(boolParam("deterministic", false,
                              "On a GPU, only convolution algorithms that give the same result on "
                              "every run (some are slower), so a run resumed from a checkpoint "
                              "ends exactly as an uninterrupted one. The CPU is deterministic for "
                              "a given thread count.")),
        };
        t.readTrain = [](const NodeParams &p, TrainingJob &job) {
            job.epochs = p.i("epochs");
            job.batchSize = p.i("batch_size");
            job.seed = uint64_t(p.i("seed"));
            job.shuffle = p.b("shuffle");
            job.checkpointEvery = p.i("checkpoint_every");
            job.checkpointSteps = p.i("checkpoint_steps");
            job.keepCheckpoints = p.i("keep_checkpoints");
            job.dataWorkers = int(p.i("data_workers"));
            job.device = p.s("device");
            job.precision = p.s("precision");
            job.deterministic = p.b("deterministic");
            job.averageLast = p.f("average_last");
        };
        c.add(std::move(t));
    }
    {
        NodeType t =
            nodeType(NodeRole::Evaluate, "evaluate", "Training", "Evaluate",
                     "Runs the trained model over the data: loss, accuracy, confusion matrix.");
        NodeTypeSpec &s = t.spec;
        s.inputs = {
            port("data", PortType::Samples, "Samples to evaluate on (e.g. the test split)."),
            port("model", PortType::Model, "The trained model."),
        };
        s.outputs = {port("metrics", PortType::Metrics, "Loss, accuracy and confusion matrix.")};
        s.params = {
            intParam("batch_size", 1000, closed(1, kMaxBatch), "Samples per evaluation step.")};
        c.add(std::move(t));
    }
}

} // namespace fb::exec::nodes
