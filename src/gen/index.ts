/** The sample generator (`segscan gen`, `segscan demo`). */
export {
  generateDataDir,
  GenerateTargetNotEmpty,
  SIZE_PROFILES,
  DEFAULT_START_TIMESTAMP_MICROS,
  type BatchLayout,
  type GenerateOptions,
  type GeneratedDataDir,
  type InjectedFault,
  type PartitionLayout,
  type SegmentLayout,
  type SizeProfile,
  type SizeProfileName,
} from "./generate.js";
export {
  SCENARIOS,
  DEMO_SCENARIOS,
  getScenario,
  listScenarios,
  UnknownScenarioError,
  type Scenario,
  type ScenarioExpectation,
} from "./scenarios.js";
export { Prng } from "./prng.js";
export {
  CLUSTER_FAULTS,
  clusterFaultListText,
  clusterNextCommands,
  generateCluster,
  getClusterFault,
  type ClusterFault,
  type ClusterOptions,
  type GeneratedCluster,
} from "./cluster.js";
