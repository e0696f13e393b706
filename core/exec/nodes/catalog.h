#pragma once

// The families of built-in node types, each adding its types to the catalog (catalog.cpp lists
// them, in palette order).

namespace fb::exec {
class NodeCatalog;
}

namespace fb::exec::nodes {

void addDataSources(NodeCatalog &c);       // data_sources.cpp
void addPreprocessing(NodeCatalog &c);     // preprocess.cpp
void addImageAugmentation(NodeCatalog &c); // augment.cpp
void addAudioFeatures(NodeCatalog &c);     // audio.cpp
void addAudioAugmentation(NodeCatalog &c); // audio.cpp
void addModelLayers(NodeCatalog &c);       // layers.cpp
void addSilu(NodeCatalog &c);              // silu.cpp
void addGlobalAvgPool(NodeCatalog &c);     // global_avg_pool.cpp
void addBatchNorm1d(NodeCatalog &c);       // batchnorm1d.cpp
void addTraining(NodeCatalog &c);          // training.cpp

} // namespace fb::exec::nodes
