package io.kinesisspark.switching

import io.kinesisspark.KinesisErrors

/** DynamoDB's naming rules for tables: 3 to 255 characters from a-z, A-Z, 0-9, '_', '-' and '.'. */
private[switching] object TableNames {
  private val TableName = "[a-zA-Z0-9_.-]{3,255}".r

  def accepted(what: String): String =
    s"a DynamoDB table name (3 to 255 characters from a-z, A-Z, 0-9, '_', '-' and '.'): $what"

  def check(option: String, table: String, accepted: String): Unit =
    if (!TableName.pattern.matcher(table).matches()) throw KinesisErrors.invalidOption(option, table, accepted)
}
