package io.kinesisspark.switching

import org.apache.hadoop.conf.Configuration

import io.kinesisspark.KinesisSourceOptions
import io.kinesisspark.aws.{DynamoDbLeaseTable, KinesisApi}

/**
 * The start where another consumer stopped, when the query names one: a KCL application's lease table (option
 * `kclLeaseTable`, [[LeaseTableStart]]) or an awslabs connector query's checkpoint (option
 * `awslabsCheckpointLocation`, [[AwslabsStart]]). The query's first start makes it; [[PrintStart]] prints it.
 *
 * {{{
 *   SwitchStart.plan(options, hadoopConf, api).fold(options.initialPosition)(_.position)
 * }}}
 */
object SwitchStart {
  /** @return `None` when the options name no consumer to continue from */
  def plan(options: KinesisSourceOptions, hadoopConf: Configuration, api: KinesisApi): Option[StartPlan] =
    options.kclLeaseTable.map { lease =>
      val table = new DynamoDbLeaseTable(lease.table, lease.connection)
      try LeaseTableStart.plan(options, table, api) finally table.close()
    }.orElse(options.awslabsCheckpoint.map(AwslabsStart.read(options, _, hadoopConf, api)))
}
