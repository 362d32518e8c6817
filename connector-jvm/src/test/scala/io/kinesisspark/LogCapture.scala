package io.kinesisspark

import scala.collection.mutable

import org.apache.logging.log4j.{Level, LogManager}
import org.apache.logging.log4j.core.{LogEvent, LoggerContext}
import org.apache.logging.log4j.core.appender.AbstractAppender
import org.apache.logging.log4j.core.config.{LoggerConfig, Property}

/**
 * What one logger writes while a test's code runs, at every level, through log4j 2 (the logging Spark brings and the
 * connector's SLF4J calls reach). The logger writes nowhere else meanwhile.
 *
 * {{{
 *   val (_, logged) = LogCapture.of(classOf[ShardDiscovery])(discovery.refreshShards())
 *   assert(!logged.exists(_.level == "WARN"))
 * }}}
 */
object LogCapture {
  final case class Logged(level: String, message: String)

  def of[T](logger: Class[_])(body: => T): (T, Seq[Logged]) = {
    val name = logger.getName
    val context = LogManager.getContext(false).asInstanceOf[LoggerContext]
    val config = context.getConfiguration
    val logged = mutable.ArrayBuffer.empty[Logged]
    val appender = new AbstractAppender(s"capture-$name", null, null, true, Property.EMPTY_ARRAY) {
      override def append(event: LogEvent): Unit =
        logged.synchronized(logged += Logged(event.getLevel.name(), event.getMessage.getFormattedMessage))
    }
    appender.start()
    val loggerConfig = new LoggerConfig(name, Level.ALL, false)
    loggerConfig.addAppender(appender, Level.ALL, null)
    config.addLogger(name, loggerConfig)
    context.updateLoggers()
    try {
      val result = body
      (result, logged.synchronized(logged.toList))
    } finally {
      config.removeLogger(name)
      context.updateLoggers()
      appender.stop()
    }
  }
}
