package org.apache.spark.kinesisspark

import java.util.concurrent.ConcurrentHashMap

import scala.annotation.tailrec

import org.apache.spark.SparkEnv
import org.apache.spark.rpc.RpcEndpointRef
import org.apache.spark.util.RpcUtils

/**
 * An executor's references to the driver's endpoints of the connector, looked up once each (a lookup is itself an
 * RPC) and forgotten by their channel when the endpoint is gone or its query is done here.
 *
 * {{{
 *   DriverEndpoints.ref("kinesis-spark-prefetch-3-…").askSync[java.lang.Boolean](message)
 * }}}
 */
private[kinesisspark] object DriverEndpoints {
  private val refs = new ConcurrentHashMap[String, RpcEndpointRef]()

  def ref(name: String): RpcEndpointRef = Option(refs.get(name)).getOrElse {
    // Looked up outside the map's lock: a lookup may wait up to the RPC timeout.
    val env = SparkEnv.get
    val found = RpcUtils.makeDriverRef(name, env.conf, env.rpcEnv)
    Option(refs.putIfAbsent(name, found)).getOrElse(found)
  }

  def forget(name: String): Unit = refs.remove(name)

  /** Whether `e` (or a cause) says the driver has no such endpoint (its query stopped). */
  @tailrec def notFound(e: Throwable): Boolean =
    e != null && (e.getClass.getName == "org.apache.spark.rpc.RpcEndpointNotFoundException" || notFound(e.getCause))
}
